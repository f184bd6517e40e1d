//===- TileLinear.cpp - zero-tile-linear ----------------------------------===//
//
// Memory-centric tiling (DeepSpeed's TiledLinear): a large weight W[K, N]
// becomes in x out parameters, its tiles, so that stage 3 gathers, uses and
// releases one tile at a time and the working memory of the layer shrinks by
// the number of tiles.
//
// The uses zero-model emits for a linear map are rewritten per tile:
// - y = x W + b, `linalg.matmul ins(x, W) outs(init)`: column block j of y is
//   init[:, j] + sum_i x[:, i] W_ij, the sum chained through the matmul's
//   init in increasing i;
// - dx = dy W^T, a `linalg.transpose` of W read by matmuls: column block i of
//   dx is init[:, i] + sum_j dy[:, j] W_ij^T, chained likewise;
// - dW = x^T dy, the gradient result: tile ij is x^T[i, :] dy[:, j], so no
//   tile sums over a split dimension and the full gradient never exists.
// Chaining needs neither extra additions nor buffers for partial sums; the
// bits are those of the untiled step where the matmul kernel accumulates into
// its init in order (docs/Passes.md, "--zero-tile-linear").
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/Transforms/TrainStep.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace zero {
#define GEN_PASS_DEF_ZEROTILELINEARPASS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero
} // namespace mlir

using namespace mlir;
using namespace mlir::zero;

namespace {

constexpr StringLiteral kPassName = "zero-tile-linear";

/// A 2-D matmul with the default indexing maps and cast in the step's body:
/// the new matmuls are built with the defaults.
bool isPlainMatmul(Operation *op, Block *body) {
  auto matmul = dyn_cast_or_null<linalg::MatmulOp>(op);
  return matmul && op->getBlock() == body && !matmul.hasUserDefinedMaps() &&
         matmul.getCast() == linalg::TypeFn::cast_signed &&
         matmul.hasPureTensorSemantics() &&
         llvm::all_of(op->getOperandTypes(), [](Type type) {
           auto tensor = dyn_cast<RankedTensorType>(type);
           return tensor && tensor.getRank() == 2 && tensor.hasStaticShape();
         });
}

/// `value` is only the right-hand operand of plain matmuls.
bool isOnlyMatmulRhs(Value value, Block *body) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    return isPlainMatmul(use.getOwner(), body) && use.getOperandNumber() == 1 &&
           use.getOwner()->getOperand(0) != value;
  });
}

/// Every use of `w` is y = x W (a matmul's right-hand operand) or W^T (a 2-D
/// transpose read only as a matmul's right-hand operand).
bool isLinearWeight(BlockArgument w, Block *body) {
  auto type = dyn_cast<RankedTensorType>(w.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() || w.use_empty())
    return false;
  for (OpOperand &use : w.getUses()) {
    Operation *user = use.getOwner();
    if (isPlainMatmul(user, body)) {
      if (use.getOperandNumber() != 1 || user->getOperand(0) == w)
        return false;
      continue;
    }
    auto transpose = dyn_cast<linalg::TransposeOp>(user);
    if (!transpose || user->getBlock() != body ||
        !transpose.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0} ||
        !isOnlyMatmulRhs(transpose->getResult(0), body))
      return false;
  }
  return true;
}

/// Records the ops a builder creates, to mark them like the op they replace.
struct CreatedOps : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

class Tiler {
public:
  Tiler(func::FuncOp func, int64_t in, int64_t out)
      : func(func), body(&func.getBody().front()), in(in), out(out),
        b(func.getContext()) {
    b.setListener(&created);
  }

  /// Replaces parameter argument `index` by its tiles.
  void tile(unsigned index);

private:
  /// Erases the replaced ops that nothing reads any more, and the ops that
  /// only they read.
  void eraseDead();

  SmallVector<OpFoldResult> indices(ArrayRef<int64_t> values) {
    return llvm::map_to_vector(values, [&](int64_t value) -> OpFoldResult {
      return b.getIndexAttr(value);
    });
  }
  /// The [rows, cols] block of a 2-D tensor at (row, col); `x` itself when
  /// the block is all of it.
  Value slice(Location loc, Value x, int64_t row, int64_t col, int64_t rows,
              int64_t cols) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
    if (rows == shape[0] && cols == shape[1])
      return x;
    return tensor::ExtractSliceOp::create(
        b, loc, x, indices({row, col}), indices({rows, cols}), indices({1, 1}));
  }
  Value insert(Location loc, Value x, Value dest, int64_t row, int64_t col) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
    return tensor::InsertSliceOp::create(b, loc, x, dest, indices({row, col}),
                                         indices(shape), indices({1, 1}));
  }
  Value empty(Location loc, ArrayRef<int64_t> shape, Type elementType) {
    return tensor::EmptyOp::create(b, loc, shape, elementType);
  }
  Value matmul(Location loc, Value lhs, Value rhs, Value init) {
    return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                    ValueRange{lhs, rhs}, ValueRange{init})
        .getResult(0);
  }
  /// Marks the ops created since the last call like `original` (its
  /// zero.segment, for activation checkpointing) and records `original` for
  /// erasure.
  void replaced(Operation *original) {
    // Not the ops of a new matmul's region: segments are ops of the body.
    for (Operation *op : created.ops)
      if (op->getBlock() == body)
        op->setDiscardableAttrs(original->getDiscardableAttrDictionary());
    created.ops.clear();
    dead.insert(original);
  }

  void tileForward(linalg::MatmulOp op, ArrayRef<Value> tiles);
  void tileTransposed(linalg::MatmulOp op, ArrayRef<Value> tiles);
  Value blockOf(Location loc, Value value, int64_t row, int64_t col,
                int64_t rows, int64_t cols, bool products);

  func::FuncOp func;
  Block *body;
  int64_t in, out;
  /// The tile shape.
  int64_t kt = 0, nt = 0;
  OpBuilder b;
  CreatedOps created;
  llvm::SetVector<Operation *> dead;
};

// y[:, j] = init[:, j] + x[:, 0] W_0j + x[:, 1] W_1j + ..., in that order.
void Tiler::tileForward(linalg::MatmulOp op, ArrayRef<Value> tiles) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  Value x = op.getInputs()[0], init = op.getOutputs()[0];
  auto type = cast<RankedTensorType>(init.getType());
  int64_t m = type.getDimSize(0);
  Value result =
      out > 1 ? empty(loc, type.getShape(), type.getElementType()) : Value();
  for (int64_t j = 0; j < out; ++j) {
    Value acc = out > 1 ? blockOf(loc, init, 0, j * nt, m, nt, false) : init;
    for (int64_t i = 0; i < in; ++i)
      acc =
          matmul(loc, slice(loc, x, 0, i * kt, m, kt), tiles[i * out + j], acc);
    result = out > 1 ? insert(loc, acc, result, 0, j * nt) : acc;
  }
  op->getResult(0).replaceAllUsesWith(result);
  replaced(op);
}

// dx[:, i] = init[:, i] + dy[:, 0] W_i0^T + dy[:, 1] W_i1^T + ..., in that
// order; each tile is transposed right before its product.
void Tiler::tileTransposed(linalg::MatmulOp op, ArrayRef<Value> tiles) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  Value dy = op.getInputs()[0], init = op.getOutputs()[0];
  auto type = cast<RankedTensorType>(init.getType());
  int64_t m = type.getDimSize(0);
  Type elementType =
      cast<RankedTensorType>(tiles[0].getType()).getElementType();
  Value result =
      in > 1 ? empty(loc, type.getShape(), type.getElementType()) : Value();
  for (int64_t i = 0; i < in; ++i) {
    Value acc = in > 1 ? blockOf(loc, init, 0, i * kt, m, kt, false) : init;
    for (int64_t j = 0; j < out; ++j) {
      Value transposed =
          linalg::TransposeOp::create(b, loc, tiles[i * out + j],
                                      empty(loc, {nt, kt}, elementType),
                                      ArrayRef<int64_t>{1, 0})
              .getResult()[0];
      acc = matmul(loc, slice(loc, dy, 0, j * nt, m, nt), transposed, acc);
    }
    result = in > 1 ? insert(loc, acc, result, 0, i * kt) : acc;
  }
  op->getResult(0).replaceAllUsesWith(result);
  replaced(op);
}

// The [rows, cols] block of `value` at (row, col). A fill of a tensor.empty
// (a zero init) and, with `products`, a matmul (x^T dy) that nothing else
// reads are computed for the block alone, so that the full tensor is never
// formed; anything else is sliced.
Value Tiler::blockOf(Location loc, Value value, int64_t row, int64_t col,
                     int64_t rows, int64_t cols, bool products) {
  Operation *def = value.getDefiningOp();
  if (def && value.hasOneUse()) {
    if (products && isPlainMatmul(def, body)) {
      auto product = cast<linalg::MatmulOp>(def);
      Value lhs = product.getInputs()[0], rhs = product.getInputs()[1];
      int64_t reduction = cast<RankedTensorType>(lhs.getType()).getDimSize(1);
      Value init =
          blockOf(loc, product.getOutputs()[0], row, col, rows, cols, products);
      return matmul(loc, slice(loc, lhs, row, 0, rows, reduction),
                    slice(loc, rhs, 0, col, reduction, cols), init);
    }
    auto fill = dyn_cast<linalg::FillOp>(def);
    if (fill && fill.hasPureTensorSemantics() &&
        fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
      auto type = cast<RankedTensorType>(value.getType());
      return linalg::FillOp::create(
                 b, loc, ValueRange{fill.getInputs()[0]},
                 ValueRange{empty(loc, {rows, cols}, type.getElementType())})
          .getResult(0);
    }
  }
  return slice(loc, value, row, col, rows, cols);
}

void Tiler::tile(unsigned index) {
  BlockArgument w = func.getArgument(index);
  auto type = cast<RankedTensorType>(w.getType());
  kt = type.getDimSize(0) / in;
  nt = type.getDimSize(1) / out;
  StringRef name =
      func.getArgAttrOfType<StringAttr>(index, ZeroDialect::getParamAttrName())
          .getValue();
  MLIRContext *ctx = func.getContext();
  auto tileType = RankedTensorType::get({kt, nt}, type.getElementType());

  // The tiles, row-major, right after W; each keeps W's other attributes.
  SmallVector<Value> tiles;
  SmallVector<std::string> names;
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      names.push_back((name + ".tile_" + Twine(i) + "_" + Twine(j)).str());
      NamedAttrList attrs(func.getArgAttrDict(index));
      attrs.set(ZeroDialect::getParamAttrName(),
                StringAttr::get(ctx, names.back()));
      attrs.set(
          ZeroDialect::getTileAttrName(),
          DictionaryAttr::get(
              ctx,
              {NamedAttribute(StringAttr::get(ctx, "param"),
                              StringAttr::get(ctx, name)),
               NamedAttribute(StringAttr::get(ctx, "offset"),
                              DenseI64ArrayAttr::get(ctx, {i * kt, j * nt})),
               NamedAttribute(StringAttr::get(ctx, "shape"),
                              DenseI64ArrayAttr::get(ctx, type.getShape()))}));
      unsigned at = index + 1 + tiles.size();
      (void)func.insertArgument(at, tileType, attrs.getDictionary(ctx),
                                w.getLoc());
      tiles.push_back(func.getArgument(at));
    }
  }
  w = func.getArgument(index);

  // The users, collected first: the rewrite replaces them.
  SmallVector<linalg::MatmulOp> forward, transposed;
  for (Operation *user : llvm::make_early_inc_range(w.getUsers())) {
    if (auto matmul = dyn_cast<linalg::MatmulOp>(user)) {
      forward.push_back(matmul);
      continue;
    }
    for (Operation *matmul : user->getResult(0).getUsers())
      transposed.push_back(cast<linalg::MatmulOp>(matmul));
    dead.insert(user);
  }
  for (linalg::MatmulOp matmul : forward)
    tileForward(matmul, tiles);
  for (linalg::MatmulOp matmul : transposed)
    tileTransposed(matmul, tiles);

  // The gradient result, if W has one, becomes one result per tile.
  auto ret = cast<func::ReturnOp>(body->getTerminator());
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r) {
    auto grad =
        func.getResultAttrOfType<StringAttr>(r, ZeroDialect::getGradAttrName());
    if (!grad || grad.getValue() != name)
      continue;
    Value full = ret.getOperand(r);
    Operation *def = full.getDefiningOp();
    // After the full gradient's op, which is erased unless a slice of its
    // result is all the tiles can be.
    if (def && def->getBlock() == body)
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPoint(ret);
    SmallVector<Value> operands(ret.getOperands());
    SmallVector<Value> grads;
    for (int64_t i = 0; i < in; ++i)
      for (int64_t j = 0; j < out; ++j)
        grads.push_back(
            blockOf(full.getLoc(), full, i * kt, j * nt, kt, nt, true));
    if (def && def->getBlock() == body)
      replaced(def);
    else
      created.ops.clear();
    NamedAttrList attrs(func.getResultAttrDict(r));
    for (auto [t, tileGrad] : llvm::enumerate(grads)) {
      attrs.set(ZeroDialect::getGradAttrName(), StringAttr::get(ctx, names[t]));
      (void)func.insertResult(r + 1 + t, tileType, attrs.getDictionary(ctx));
      operands.insert(operands.begin() + r + 1 + t, tileGrad);
    }
    operands.erase(operands.begin() + r);
    (void)func.eraseResult(r);
    ret->setOperands(operands);
    break;
  }
  eraseDead();
  assert(w.use_empty() && "every use of the weight is rewritten");
  (void)func.eraseArgument(index);
}

void Tiler::eraseDead() {
  // Users first: an op is erased once nothing reads it.
  SmallVector<Operation *> worklist(dead.begin(), dead.end());
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty())
      continue;
    dead.remove(op);
    SmallVector<Operation *> operands;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        operands.push_back(def);
    op->erase();
    erased.insert(op);
    for (Operation *def : operands)
      if (!erased.contains(def) && isOpTriviallyDead(def))
        worklist.push_back(def);
  }
}

struct ZeroTileLinearPass
    : public zero::impl::ZeroTileLinearPassBase<ZeroTileLinearPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t in = inSplits, out = outSplits, limit = threshold;
    auto invalid = [&](StringRef option, int64_t min, int64_t value) {
      module.emitError() << "'" << kPassName << "': " << option
                         << " must be at least " << min << ", got " << value;
      signalPassFailure();
    };
    if (in < 1)
      return invalid("in-splits", 1, in);
    if (out < 1)
      return invalid("out-splits", 1, out);
    if (limit < 0)
      return invalid("threshold", 0, limit);
    FailureOr<func::FuncOp> func = lookupTrainStep(module, entry);
    if (failed(func))
      return signalPassFailure();
    if (in == 1 && out == 1)
      return;
    Block *body = &func->getBody().front();

    // The weights to tile, checked before anything changes.
    SmallVector<std::string> names;
    bool failedSplit = false;
    for (const ParamArg &param : getParamArgs(*func)) {
      if (func->getArgAttr(param.arg.getArgNumber(),
                           ZeroDialect::getTileAttrName()) ||
          !isLinearWeight(param.arg, body))
        continue;
      auto type = cast<RankedTensorType>(param.arg.getType());
      if (type.getNumElements() <= limit)
        continue;
      int64_t splits[2] = {in, out};
      StringRef option[2] = {"in-splits", "out-splits"};
      StringRef dim[2] = {"in", "out"};
      for (int d = 0; d < 2; ++d) {
        if (type.getDimSize(d) % splits[d] == 0)
          continue;
        mlir::emitError(param.arg.getLoc())
            << "'" << kPassName << "': " << option[d] << " = " << splits[d]
            << " does not divide dimension " << d << " (" << dim[d] << ", "
            << type.getDimSize(d) << ") of parameter '" << param.name << "'";
        failedSplit = true;
      }
      names.push_back(param.name.str());
    }
    // The tiles' names must not be taken.
    llvm::StringSet<> taken;
    for (const ParamArg &param : getParamArgs(*func))
      taken.insert(param.name);
    for (const std::string &name : names)
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < out; ++j) {
          std::string tile =
              (name + ".tile_" + Twine(i) + "_" + Twine(j)).str();
          if (!taken.contains(tile))
            continue;
          func->emitError()
              << "'" << kPassName << "': cannot tile '" << name
              << "': its tile name '" << tile << "' is a parameter already";
          failedSplit = true;
        }
    if (failedSplit)
      return signalPassFailure();

    Tiler tiler(*func, in, out);
    for (const std::string &name : names) {
      for (const ParamArg &param : getParamArgs(*func)) {
        if (param.name != name)
          continue;
        tiler.tile(param.arg.getArgNumber());
        break;
      }
    }
  }
};

} // namespace
