# Writes the text of INPUT to OUTPUT as a C++ raw string literal, for a
# source file to #include where it needs the text (cuda/Codegen.cpp embeds
# ops/ElementMath.h in every generated kernel). Run with cmake -P.
file(READ "${INPUT}" text)
string(FIND "${text}" ")zero_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the literal's delimiter")
endif()
file(WRITE "${OUTPUT}.tmp" "R\"zero_embed(${text})zero_embed\"\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
