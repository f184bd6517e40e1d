//===- PassOptionEnums.cpp - enumerated options of the zero passes --------===//

#include "zero/Dialect/Zero/Transforms/PassOptionEnums.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::zero;

llvm::cl::ValuesClass zero::getPrecisionValues() {
  return llvm::cl::values(
      clEnumValN(Precision::FP32, "fp32", "32-bit floats (no mixed precision)"),
      clEnumValN(Precision::BF16, "bf16",
                 "bfloat16, with fp32 master weights (DeepSpeed's bf16)"),
      clEnumValN(Precision::FP16, "fp16",
                 "IEEE half, with fp32 master weights and loss scaling "
                 "(DeepSpeed's fp16)"));
}

FloatType zero::getPrecisionType(MLIRContext *context, Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return Float32Type::get(context);
  case Precision::BF16:
    return BFloat16Type::get(context);
  case Precision::FP16:
    return Float16Type::get(context);
  }
  llvm_unreachable("unknown precision");
}

FloatType zero::getComputeElementType(MLIRContext *context,
                                      ComputeType computeType,
                                      Precision precision,
                                      bool scaledBackward) {
  switch (computeType) {
  case ComputeType::Auto:
    // fp16 computes in f16 only where the loss scale seeds the backward
    // pass: scaled where the gradients are rounded instead, an f16 backward
    // pass would run on unscaled values that underflow.
    if (precision == Precision::BF16 ||
        (precision == Precision::FP16 && scaledBackward))
      return getPrecisionType(context, precision);
    return {};
  case ComputeType::F32:
  case ComputeType::TF32:
    return {};
  case ComputeType::BF16:
    return BFloat16Type::get(context);
  case ComputeType::F16:
    return Float16Type::get(context);
  }
  llvm_unreachable("unknown compute type");
}

llvm::cl::ValuesClass zero::getComputeTypeValues() {
  return llvm::cl::values(
      clEnumValN(ComputeType::Auto, "auto",
                 "bf16 under bf16 storage, f16 under fp16 where the loss scale "
                 "seeds the backward pass, as DeepSpeed computes; else f32"),
      clEnumValN(ComputeType::F32, "f32", "the step's own f32 arithmetic"),
      clEnumValN(ComputeType::TF32, "tf32",
                 "f32 GEMM operands rounded to tf32 (tensor cores), f32 "
                 "accumulation; f32 activations"),
      clEnumValN(ComputeType::BF16, "bf16",
                 "bfloat16 GEMM operands, f32 accumulation"),
      clEnumValN(ComputeType::F16, "f16",
                 "IEEE half GEMM operands, f32 accumulation"));
}

llvm::cl::ValuesClass zero::getOptimizerTypeValues() {
  return llvm::cl::values(
      clEnumValN(OptimizerType::Adam, "adam",
                 "Adam; decoupled weight decay unless adam-w-mode=false"),
      clEnumValN(OptimizerType::AdamW, "adamw", "AdamW"),
      clEnumValN(OptimizerType::Sgd, "sgd",
                 "SGD with momentum, dampening and Nesterov"));
}
