// Bad configurations are rejected with a message and exit code 1.

// RUN: not zero-model gpt --hidden-size 100 --num-attention-heads 3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HEADS
// HEADS: zero-model: --hidden-size 100 is not divisible by --num-attention-heads 3

// RUN: not zero-model gpt --num-layers 0 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: zero-model: --num-layers must be positive, got 0

// RUN: not zero-model gpt --vocab-size=-5 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: zero-model: --vocab-size must be positive, got -5

// RUN: not zero-model mlp --hidden 0 2>&1 | FileCheck %s --check-prefix=HIDDEN
// HIDDEN: zero-model: --hidden must be positive, got 0

// RUN: not zero-model 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: zero-model: expected a model: 'zero-model mlp ...' or 'zero-model gpt ...'

// RUN: not zero-model mlp --dtype f16 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: Cannot find option named 'f16'

// RUN: not zero-model mlp --freeze='fc0.*,h.*' 2>&1 | FileCheck %s --check-prefix=FREEZE
// FREEZE: zero-model: --freeze 'h.*' matches no parameter (they are named like 'fc1.bias')

// RUN: not zero-model mlp --freeze='fc[0' 2>&1 | FileCheck %s --check-prefix=FREEZE-GLOB
// FREEZE-GLOB: zero-model: --freeze 'fc[0' is not a glob pattern: invalid glob pattern, unmatched '['
