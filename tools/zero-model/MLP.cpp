//===- MLP.cpp - multi-layer perceptron training step ---------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::zero_model;

static std::string weightName(int64_t layer) {
  return ("fc" + Twine(layer) + ".weight").str();
}
static std::string biasName(int64_t layer) {
  return ("fc" + Twine(layer) + ".bias").str();
}

void zero_model::declareMLP(const MLPConfig &config, TrainStep &step) {
  int64_t h = config.hidden;
  for (int64_t i = 0; i < config.layers; ++i) {
    step.addParam(weightName(i), {h, h});
    step.addParam(biasName(i), {h});
  }
  Type i32 = IntegerType::get(step.getFloatType().getContext(), 32);
  step.addData("inputs", {config.batchSize, h}, step.getFloatType());
  step.addData("labels", {config.batchSize}, i32, /*bound=*/h);
}

Value zero_model::buildMLP(const MLPConfig &config, TrainStep &step,
                           TensorBuilder &tb) {
  // Forward: keep every layer's input and pre-activation for the backward
  // pass.
  SmallVector<Value> inputs, preacts;
  Value x = step.data("inputs");
  for (int64_t i = 0; i < config.layers; ++i) {
    tb.setName("fc" + Twine(i));
    inputs.push_back(x);
    Operation *begin = tb.beginSegment();
    Value z = tb.linear(x, step.param(weightName(i)), step.param(biasName(i)));
    preacts.push_back(z);
    x = i + 1 < config.layers ? tb.relu(z) : z;
    tb.markSegment(begin, i);
  }

  tb.setName("loss");
  CrossEntropy ce = tb.crossEntropy(x, step.data("labels"));

  // Backward, from the logits to the first layer.
  Value dz = ce.dlogits;
  for (int64_t i = config.layers - 1; i >= 0; --i) {
    tb.setName("fc" + Twine(i) + ".grad");
    LinearGrads grads = tb.linearBackward(
        inputs[i], step.param(weightName(i)), dz, /*needDx=*/i > 0);
    step.setGrad(weightName(i), grads.dw);
    step.setGrad(biasName(i), grads.db);
    if (i > 0)
      dz = tb.reluBackward(preacts[i - 1], grads.dx);
  }
  return ce.loss;
}
