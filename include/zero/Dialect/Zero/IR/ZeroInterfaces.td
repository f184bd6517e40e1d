//===- ZeroInterfaces.td - zero dialect interfaces ---------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD
#define ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD

include "mlir/IR/OpBase.td"

def Zero_AsyncStartOpInterface : OpInterface<"AsyncStartOpInterface"> {
  let cppNamespace = "::mlir::zero";
  let description = [{
    An op that starts an asynchronous operation and returns a `!zero.handle`
    as its only result. Exactly one `zero.wait` consumes the handle and yields
    the values of `getAwaitedTypes`, so that `zero.wait` can check its result
    types without knowing each start op.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Appends the types that `zero.wait` on this op's handle yields. Fails
        when this op is itself invalid (its own verifier reports why).
      }],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"getAwaitedTypes",
      /*args=*/(ins "::llvm::SmallVectorImpl<::mlir::Type> &":$types)>,
  ];
  let extraClassDeclaration = [{
    /// The handle this op returns.
    ::mlir::TypedValue<::mlir::zero::HandleType> getAsyncHandle() {
      return ::llvm::cast<::mlir::TypedValue<::mlir::zero::HandleType>>(
          (*this)->getResult(0));
    }
    /// The `zero.wait` on the handle; null while the op is not valid (the
    /// verifier requires exactly one, and nothing else, to use the handle).
    ::mlir::zero::WaitOp getWait();
  }];
  let verify = [{
    return ::mlir::zero::detail::verifyAsyncStartOp($_op);
  }];
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD
