//===- ZeroAttrs.td - zero dialect attributes --------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD

include "zero/Dialect/Zero/IR/ZeroBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Zero_MemorySpace : I32EnumAttr<"MemorySpace", "where a tensor lives", [
    I32EnumAttrCase<"Device", 0, "device">,
    I32EnumAttrCase<"Host", 1, "host">,
    I32EnumAttrCase<"Nvme", 2, "nvme">]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

def Zero_MemorySpaceAttr : EnumAttr<Zero_Dialect, Zero_MemorySpace,
                                    "memory_space"> {
  let summary = "memory space of a tensor";
  let description = [{
    Where a tensor lives: `device` (accelerator memory), `host` (pinned CPU
    memory) or `nvme` (swap files). As the encoding of a tensor type it marks
    a tensor that was swapped out; a tensor without encoding lives on the
    device.

    ```mlir
    tensor<1024xf32, #zero.memory_space<nvme>>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Zero_ReductionKind : I32EnumAttr<"ReductionKind",
                                     "reduction of a collective", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Avg", 1, "avg">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

def Zero_ReductionKindAttr : EnumAttr<Zero_Dialect, Zero_ReductionKind,
                                      "reduction"> {
  let summary = "reduction of a collective";
  let description = [{
    `sum`, `max`, `min`, or `avg`: the sum divided by the world size, as
    DeepSpeed averages gradients across data-parallel ranks.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Zero_AdamMode : I32EnumAttr<"AdamMode", "how Adam applies weight decay", [
    I32EnumAttrCase<"AdamW", 0, "adamw">,
    I32EnumAttrCase<"L2", 1, "l2">]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

def Zero_AdamModeAttr : EnumAttr<Zero_Dialect, Zero_AdamMode, "adam_mode"> {
  let summary = "how Adam applies weight decay";
  let description = [{
    `adamw`: decoupled weight decay (AdamW, DeepSpeed's default
    `adam_w_mode`); `l2`: weight decay added to the gradient (classic Adam).
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

def Zero_LayoutAttr : AttrDef<Zero_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "how a tensor is flattened, padded and cut across ranks";
  let description = [{
    A tensor of `shape` is flattened in row-major order, padded with zeros at
    the end to `padded_numel` elements and cut into `world_size` equal
    contiguous shards; rank `r` holds elements
    `[r * shard_numel, (r + 1) * shard_numel)` of the padded flat tensor.

    `padded_numel` defaults to the element count rounded up to a multiple of
    `world_size` (DeepSpeed stage 3) and is printed only when it differs;
    stage 1/2 flat groups pad further (to a multiple of 2 x world size).

    ```mlir
    #zero.layout<shape = [1024, 4096], world_size = 8>
    #zero.layout<shape = [10], world_size = 4>                    // shards of 3
    #zero.layout<shape = [10], world_size = 4, padded_numel = 16> // shards of 4
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "full shape">:$shape,
                        "int64_t":$worldSize,
                        "int64_t":$paddedNumel);
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$worldSize),
    [{
      return $_get($_ctxt, shape, worldSize,
                   getDefaultPaddedNumel(shape, worldSize));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of elements of the full (unpadded) tensor.
    int64_t getNumel() const;
    /// Number of elements of one rank's shard: paddedNumel / worldSize.
    int64_t getShardNumel() const;
    /// Number of padding elements at the end of the flat tensor.
    int64_t getPaddingNumel() const { return getPaddedNumel() - getNumel(); }

    /// The full tensor type: `tensor<shape x elementType>`.
    ::mlir::RankedTensorType getFullType(::mlir::Type elementType) const;
    /// One rank's shard: `tensor<shardNumel x elementType>`.
    ::mlir::RankedTensorType getShardType(::mlir::Type elementType) const;

    /// The stage-3 default: the element count of `shape` rounded up to a
    /// multiple of `worldSize`.
    static int64_t getDefaultPaddedNumel(::llvm::ArrayRef<int64_t> shape,
                                         int64_t worldSize);
  }];
}

//===----------------------------------------------------------------------===//
// QuantizedAttr
//===----------------------------------------------------------------------===//

def Zero_QuantizedAttr : AttrDef<Zero_Dialect, "Quantized"> {
  let mnemonic = "quantized";
  let summary = "a tensor encoding: the values are stored block-quantized";
  let description = [{
    The encoding of a tensor whose values are kept as ZeRO++ packs a shard
    for a quantized all-gather (DeepSpeed's
    `zero_quantized_nontrainable_weights`): the tensor is flattened and cut
    into blocks of `block_size` elements (the last may be shorter), each
    stored as one f32 scale, absmax / 127, and its elements as `bits`-bit
    integers, round(x / scale) to nearest even. Its logical elements are the
    dequantized values, q * scale, rounded to the element type. It takes
    `4 * ceil(numel / block_size) + numel * bits / 8` bytes: the scales,
    then the values (docs/ScheduleFormat.md, "Quantized values").

    Only a quantized `zero.all_gather_start` of the same block size reads
    such a tensor: it sends the stored blocks as they are.

    ```mlir
    tensor<4096xbf16, #zero.quantized<bits = 8, block_size = 2048>>
    ```
  }];
  let parameters = (ins "int64_t":$bits, "int64_t":$blockSize);
  let assemblyFormat = "`<` `bits` `=` $bits `,` `block_size` `=` $blockSize `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The bytes of `numel` elements stored with this encoding; nothing on
    /// overflow.
    std::optional<int64_t> getStorageBytes(int64_t numel) const {
      return getPackedBlockBytes(numel, getBlockSize(), getBits());
    }
    /// The encoding of `type`, if it is a tensor stored quantized.
    static QuantizedAttr ofType(::mlir::Type type);
  }];
}

def Zero_LayoutArrayAttr : TypedArrayAttrBase<Zero_LayoutAttr,
                                              "array of #zero.layout">;

#endif // ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
