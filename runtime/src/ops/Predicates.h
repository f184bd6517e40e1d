//===- Predicates.h - the schedule's names of cmpf/cmpi predicates -*- C++ -*-//
//
// The "predicate" field of arith.cmpf and arith.cmpi (docs/ScheduleFormat.md)
// as ElementMath.h's Predicate, and each predicate's C++ spelling for the
// kernels the CUDA backend generates. Host-side only (not for NVRTC).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_OPS_PREDICATES_H
#define ZERO_RUNTIME_OPS_PREDICATES_H

#include "ElementMath.h"

#include <optional>
#include <string_view>

namespace zero::runtime::ops {

struct PredicateName {
  const char *name;       // in the schedule: "oeq"
  Predicate predicate;
  const char *enumerator; // in generated code: "OEQ"
};

inline constexpr PredicateName kCmpFPredicates[] = {
    {"oeq", Predicate::OEQ, "OEQ"},
    {"ogt", Predicate::OGT, "OGT"},
    {"oge", Predicate::OGE, "OGE"},
    {"olt", Predicate::OLT, "OLT"},
    {"ole", Predicate::OLE, "OLE"},
    {"one", Predicate::ONE, "ONE"},
    {"ord", Predicate::ORD, "ORD"},
    {"ueq", Predicate::UEQ, "UEQ"},
    {"ugt", Predicate::UGT, "UGT"},
    {"uge", Predicate::UGE, "UGE"},
    {"ult", Predicate::ULT, "ULT"},
    {"ule", Predicate::ULE, "ULE"},
    {"une", Predicate::UNE, "UNE"},
    {"uno", Predicate::UNO, "UNO"},
    {"true", Predicate::AlwaysTrue, "AlwaysTrue"},
    {"false", Predicate::AlwaysFalse, "AlwaysFalse"},
};

inline constexpr PredicateName kCmpIPredicates[] = {
    {"eq", Predicate::EQ, "EQ"},      {"ne", Predicate::NE, "NE"},
    {"slt", Predicate::SLT, "SLT"},   {"sle", Predicate::SLE, "SLE"},
    {"sgt", Predicate::SGT, "SGT"},   {"sge", Predicate::SGE, "SGE"},
    {"ult", Predicate::ULTI, "ULTI"}, {"ule", Predicate::ULEI, "ULEI"},
    {"ugt", Predicate::UGTI, "UGTI"}, {"uge", Predicate::UGEI, "UGEI"},
};

/// The predicate named `name` of arith.cmpf (`isFloat`) or arith.cmpi.
inline const PredicateName *lookupPredicate(std::string_view name,
                                            bool isFloat) {
  auto search = [&](const auto &table) -> const PredicateName * {
    for (const PredicateName &entry : table)
      if (name == entry.name)
        return &entry;
    return nullptr;
  };
  return isFloat ? search(kCmpFPredicates) : search(kCmpIPredicates);
}

/// The generated code's spelling of `predicate` ("OEQ").
inline const char *getPredicateEnumerator(Predicate predicate) {
  for (const PredicateName &entry : kCmpFPredicates)
    if (entry.predicate == predicate)
      return entry.enumerator;
  for (const PredicateName &entry : kCmpIPredicates)
    if (entry.predicate == predicate)
      return entry.enumerator;
  return "AlwaysFalse";
}

} // namespace zero::runtime::ops

#endif // ZERO_RUNTIME_OPS_PREDICATES_H
