//===- GPT.cpp - GPT-2 training step --------------------------------------===//
//
// GPT-2 forward and backward on 2-D [B*S, H] activations. Attention reshapes
// to [B*A, S, D] so that every head of every sequence is one batch of
// `linalg.batch_matmul`.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero_model;

static constexpr double kLayerNormEps = 1e-5;

/// Parameters of block `layer`, in declaration order, without "h.{i}.".
static constexpr StringLiteral kBlockParams[] = {
    "ln_1.weight",       "ln_1.bias",          "attn.c_attn.weight",
    "attn.c_attn.bias",  "attn.c_proj.weight", "attn.c_proj.bias",
    "ln_2.weight",       "ln_2.bias",          "mlp.c_fc.weight",
    "mlp.c_fc.bias",     "mlp.c_proj.weight",  "mlp.c_proj.bias"};

static std::string blockParam(int64_t layer, StringRef name) {
  return ("h." + Twine(layer) + "." + name).str();
}

void zero_model::declareGPT(const GPTConfig &config, TrainStep &step) {
  int64_t h = config.hiddenSize;
  step.addParam("wte.weight", {config.vocabSize, h});
  step.addParam("wpe.weight", {config.seqLength, h});
  SmallVector<int64_t, 2> shapes[] = {{h},         {h},    {h, 3 * h},
                                      {3 * h},     {h, h}, {h},
                                      {h},         {h},    {h, 4 * h},
                                      {4 * h},     {4 * h, h}, {h}};
  for (int64_t i = 0; i < config.numLayers; ++i)
    for (auto [name, shape] : llvm::zip_equal(kBlockParams, shapes))
      step.addParam(blockParam(i, name), shape);
  step.addParam("ln_f.weight", {h});
  step.addParam("ln_f.bias", {h});

  Type i32 = IntegerType::get(step.getFloatType().getContext(), 32);
  step.addData("tokens", {config.batchSize, config.seqLength}, i32,
               config.vocabSize);
  step.addData("targets", {config.batchSize, config.seqLength}, i32,
               config.vocabSize);
}

namespace {

/// Activations of one block kept for its backward pass.
struct BlockSaved {
  LayerNormSaved ln1, ln2;
  Value ln1Out, ln2Out; // [N, H]
  Value q, k, v;        // heads, [B*A, S, D]
  Value probs;          // attention weights, [B*A, S, S]
  Value attn;           // heads merged back, [N, H]
  Value fc;             // GELU input, [N, 4H]
  Value fcAct;          // GELU output, [N, 4H]
};

class GPTBuilder {
public:
  GPTBuilder(const GPTConfig &config, TrainStep &step, TensorBuilder &tb)
      : step(step), tb(tb), b(config.batchSize), s(config.seqLength),
        h(config.hiddenSize), a(config.numHeads), d(h / a), n(b * s),
        layers(config.numLayers), vocab(config.vocabSize),
        scale(1.0 / std::sqrt(static_cast<double>(d))) {}

  Value build();

private:
  Value param(int64_t layer, StringRef name) {
    return step.param(blockParam(layer, name));
  }
  void setGrad(int64_t layer, StringRef name, Value grad) {
    step.setGrad(blockParam(layer, name), grad);
  }

  /// [N, H] -> [B*A, S, D]: head j takes columns j*D .. j*D+D-1.
  Value splitHeads(Value x);
  /// [B*A, S, D] -> [N, H], the inverse of `splitHeads`.
  Value mergeHeads(Value x);

  Value blockForward(int64_t layer, Value x, Value mask, BlockSaved &saved);
  /// Takes the gradient of the block's output; returns that of its input.
  Value blockBackward(int64_t layer, Value dout, const BlockSaved &saved);

  TrainStep &step;
  TensorBuilder &tb;
  int64_t b, s, h, a, d, n, layers, vocab;
  double scale;
};

} // namespace

Value GPTBuilder::splitHeads(Value x) {
  Value split = tb.expandShape(x, {b, s, a, d}, {{0, 1}, {2, 3}});
  Value heads = tb.transpose(split, {0, 2, 1, 3});
  return tb.collapseShape(heads, {{0, 1}, {2}, {3}});
}

Value GPTBuilder::mergeHeads(Value x) {
  Value split = tb.expandShape(x, {b, a, s, d}, {{0, 1}, {2}, {3}});
  Value tokens = tb.transpose(split, {0, 2, 1, 3});
  return tb.collapseShape(tokens, {{0, 1}, {2, 3}});
}

Value GPTBuilder::blockForward(int64_t layer, Value x, Value mask,
                               BlockSaved &saved) {
  auto add = [](ScalarBuilder &sb, ValueRange v) { return sb.add(v[0], v[1]); };
  std::string prefix = "h." + std::to_string(layer) + ".";

  tb.setName(prefix + "attn");
  saved.ln1Out = tb.layerNorm(x, param(layer, "ln_1.weight"),
                              param(layer, "ln_1.bias"), kLayerNormEps,
                              saved.ln1);
  Value qkv = tb.linear(saved.ln1Out, param(layer, "attn.c_attn.weight"),
                        param(layer, "attn.c_attn.bias"));
  saved.q = splitHeads(tb.extractCols(qkv, 0, h));
  saved.k = splitHeads(tb.extractCols(qkv, h, h));
  saved.v = splitHeads(tb.extractCols(qkv, 2 * h, h));
  Value scores = tb.batchMatmul(saved.q, tb.transpose(saved.k, {0, 2, 1}));
  Value masked = tb.map({scores, mask}, [&](ScalarBuilder &sb, ValueRange e) {
    return sb.add(sb.mul(e[0], sb.cst(scale)), e[1]);
  });
  saved.probs = tb.softmax(masked);
  saved.attn = mergeHeads(tb.batchMatmul(saved.probs, saved.v));
  Value attnOut = tb.linear(saved.attn, param(layer, "attn.c_proj.weight"),
                            param(layer, "attn.c_proj.bias"));
  x = tb.map({x, attnOut}, add);

  tb.setName(prefix + "mlp");
  saved.ln2Out = tb.layerNorm(x, param(layer, "ln_2.weight"),
                              param(layer, "ln_2.bias"), kLayerNormEps,
                              saved.ln2);
  saved.fc = tb.linear(saved.ln2Out, param(layer, "mlp.c_fc.weight"),
                       param(layer, "mlp.c_fc.bias"));
  saved.fcAct = tb.gelu(saved.fc);
  Value mlpOut = tb.linear(saved.fcAct, param(layer, "mlp.c_proj.weight"),
                           param(layer, "mlp.c_proj.bias"));
  return tb.map({x, mlpOut}, add);
}

Value GPTBuilder::blockBackward(int64_t layer, Value dout,
                                const BlockSaved &saved) {
  std::string prefix = "h." + std::to_string(layer) + ".";

  tb.setName(prefix + "mlp.grad");
  LinearGrads proj = tb.linearBackward(
      saved.fcAct, param(layer, "mlp.c_proj.weight"), dout);
  setGrad(layer, "mlp.c_proj.weight", proj.dw);
  setGrad(layer, "mlp.c_proj.bias", proj.db);
  Value dfc = tb.geluBackward(saved.fc, proj.dx);
  LinearGrads fc =
      tb.linearBackward(saved.ln2Out, param(layer, "mlp.c_fc.weight"), dfc);
  setGrad(layer, "mlp.c_fc.weight", fc.dw);
  setGrad(layer, "mlp.c_fc.bias", fc.db);
  // The residual stream before the MLP gets dout directly and through ln_2.
  LayerNormGrads ln2 = tb.layerNormBackward(fc.dx, saved.ln2, dout);
  setGrad(layer, "ln_2.weight", ln2.dgamma);
  setGrad(layer, "ln_2.bias", ln2.dbeta);

  tb.setName(prefix + "attn.grad");
  LinearGrads cproj = tb.linearBackward(
      saved.attn, param(layer, "attn.c_proj.weight"), ln2.dx);
  setGrad(layer, "attn.c_proj.weight", cproj.dw);
  setGrad(layer, "attn.c_proj.bias", cproj.db);
  Value dy = splitHeads(cproj.dx);
  // Y = P V: dV = P^T dY, dP = dY V^T.
  Value dv = tb.batchMatmul(tb.transpose(saved.probs, {0, 2, 1}), dy);
  Value dprobs = tb.batchMatmul(dy, tb.transpose(saved.v, {0, 2, 1}));
  // Scores = scale Q K^T (+ mask): dQ = scale dS K, dK = scale dS^T Q. The
  // mask needs no gradient: P, and with it dS, is 0 where it is -inf.
  Value dscores = tb.softmaxBackward(saved.probs, dprobs, scale);
  Value dq = tb.batchMatmul(dscores, saved.k);
  Value dk = tb.batchMatmul(tb.transpose(dscores, {0, 2, 1}), saved.q);
  Value dqkv = tb.empty({n, 3 * h});
  dqkv = tb.insertCols(mergeHeads(dq), dqkv, 0);
  dqkv = tb.insertCols(mergeHeads(dk), dqkv, h);
  dqkv = tb.insertCols(mergeHeads(dv), dqkv, 2 * h);
  LinearGrads cattn = tb.linearBackward(
      saved.ln1Out, param(layer, "attn.c_attn.weight"), dqkv);
  setGrad(layer, "attn.c_attn.weight", cattn.dw);
  setGrad(layer, "attn.c_attn.bias", cattn.db);
  LayerNormGrads ln1 = tb.layerNormBackward(cattn.dx, saved.ln1, ln2.dx);
  setGrad(layer, "ln_1.weight", ln1.dgamma);
  setGrad(layer, "ln_1.bias", ln1.dbeta);
  return ln1.dx;
}

Value GPTBuilder::build() {
  Value wte = step.param("wte.weight");
  Value wpe = step.param("wpe.weight");
  Value tokens = tb.collapseShape(step.data("tokens"), {{0, 1}});
  Value targets = tb.collapseShape(step.data("targets"), {{0, 1}});

  // x = wte[tokens] + wpe[0..S-1], with wpe repeated for every sequence.
  tb.setName("embedding");
  Value positions =
      tb.collapseShape(tb.broadcast(wpe, {b, s, h}, {0}), {{0, 1}, {2}});
  Value x = tb.map({tb.gatherRows(wte, tokens), positions},
                   [](ScalarBuilder &sb, ValueRange e) {
                     return sb.add(e[0], e[1]);
                   });

  // One mask for all layers.
  tb.setName("causal_mask");
  Value mask = tb.broadcast(tb.causalMask(s), {b * a, s, s}, {0});

  SmallVector<BlockSaved> saved(layers);
  for (int64_t i = 0; i < layers; ++i) {
    Operation *begin = tb.beginSegment();
    x = blockForward(i, x, mask, saved[i]);
    tb.markSegment(begin, i);
  }

  tb.setName("ln_f");
  LayerNormSaved lnfSaved;
  Value lnf = tb.layerNorm(x, step.param("ln_f.weight"),
                           step.param("ln_f.bias"), kLayerNormEps, lnfSaved);
  tb.setName("lm_head");
  Value logits = tb.matmul(lnf, tb.transpose(wte));
  tb.setName("loss");
  CrossEntropy ce = tb.crossEntropy(logits, targets);

  // Backward.
  tb.setName("lm_head.grad");
  Value dlnf = tb.matmul(ce.dlogits, wte);
  Value dwteHead = tb.matmul(tb.transpose(ce.dlogits), lnf);
  tb.setName("ln_f.grad");
  LayerNormGrads lnfGrads = tb.layerNormBackward(dlnf, lnfSaved);
  step.setGrad("ln_f.weight", lnfGrads.dgamma);
  step.setGrad("ln_f.bias", lnfGrads.dbeta);

  Value dx = lnfGrads.dx;
  for (int64_t i = layers - 1; i >= 0; --i)
    dx = blockBackward(i, dx, saved[i]);

  tb.setName("embedding.grad");
  step.setGrad("wpe.weight",
               tb.reduce(tb.expandShape(dx, {b, s, h}, {{0, 1}, {2}}), {0},
                         ReduceKind::Sum));
  // The lookup's scatter-add is onehot(tokens)^T dx; it accumulates onto the
  // LM head's gradient, which makes the sum of the tied weight's two uses.
  step.setGrad("wte.weight", tb.matmul(tb.oneHot(tokens, vocab,
                                                 /*transposed=*/true),
                                       dx, dwteHead));
  return ce.loss;
}

Value zero_model::buildGPT(const GPTConfig &config, TrainStep &step,
                           TensorBuilder &tb) {
  return GPTBuilder(config, step, tb).build();
}
