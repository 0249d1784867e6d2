//===- Convolution.cpp - importer of ONNX Conv ----------------------------===//
//
// Conv (1 to 3 spatial dims) is imported as im2col + matmul:
//   x [N, C, *in] is zero-padded, and for every kernel offset a strided
//   slice gives the input elements that offset meets: [N, C, *out]; stacked
//   along a new dim after C they are the columns [N, g, C/g * K, L]
//   (K = kernel elements, L = output positions), and
//   W [M, C/g, *k] as [g, M/g, C/g * K] multiplies them: [N, g, M/g, L].
// A patch embedding (kernel == stride, no padding or dilation, one group, as
// ViT and CLIP have) needs no columns: the patches are a reshape and
// transpose of x, [N, L, C * K], and the conv is x_patches @ W^T + b, the
// matmul + add that raising turns into graph.linear, so sharding splits it
// like any linear layer. (Video models' tubelet embeddings are the 3-D case.)
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Conv's attributes resolved against the shapes: one entry per spatial dim.
struct ConvGeometry {
  int64_t groups = 1;
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd, output;
};

FailureOr<SmallVector<int64_t>> perSpatialDim(NodeContext &node, StringRef name, int64_t count,
                                              int64_t fallback, int64_t minimum) {
  auto given = node.intsAttr(name);
  if (failed(given))
    return failure();
  if (!*given)
    return SmallVector<int64_t>(count, fallback);
  if (static_cast<int64_t>((*given)->size()) != count)
    return node.error() << "attribute '" << name << "' has " << (*given)->size()
                        << " values; expected " << count << " (one per spatial dim)";
  for (int64_t value : **given)
    if (value < minimum)
      return node.error() << "attribute '" << name << "' is " << formatShape(**given)
                          << "; expected values >= " << minimum;
  return **given;
}

FailureOr<ConvGeometry> geometry(NodeContext &node, RankedTensorType x, RankedTensorType w) {
  ConvGeometry g;
  int64_t spatial = x.getRank() - 2;
  auto groups = node.intAttr("group", 1);
  auto autoPad = node.stringAttr("auto_pad", "NOTSET");
  if (failed(groups) || failed(autoPad))
    return failure();
  g.groups = *groups;
  int64_t channels = x.getDimSize(1), features = w.getDimSize(0);
  if (g.groups < 1 || channels % g.groups != 0 || features % g.groups != 0)
    return node.error() << "group " << g.groups << " does not divide the " << channels
                        << " input channels and " << features
                        << " output channels; expected a divisor of both";
  if (w.getDimSize(1) * g.groups != channels)
    return node.error() << "the weight " << formatShape(w.getShape()) << " takes "
                        << w.getDimSize(1) << " channels per group; expected " << channels
                        << " input channels / group " << g.groups << " = " << channels / g.groups;
  SmallVector<int64_t> weightKernel(w.getShape().drop_front(2));
  auto kernel = node.intsAttr("kernel_shape");
  if (failed(kernel))
    return failure();
  if (*kernel && ArrayRef<int64_t>(**kernel) != ArrayRef<int64_t>(weightKernel))
    return node.error() << "attribute 'kernel_shape' is " << formatShape(**kernel)
                        << "; expected the weight's " << formatShape(weightKernel);
  g.kernel = weightKernel;
  auto strides = perSpatialDim(node, "strides", spatial, 1, 1);
  auto dilations = perSpatialDim(node, "dilations", spatial, 1, 1);
  auto pads = perSpatialDim(node, "pads", 2 * spatial, 0, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  g.strides = *strides;
  g.dilations = *dilations;
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*autoPad != "NOTSET" && *autoPad != "VALID" && !same)
    return node.error() << "attribute 'auto_pad' is '" << *autoPad
                        << "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID";
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t in = x.getDimSize(2 + d), extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
    int64_t begin = (*pads)[d], end = (*pads)[spatial + d];
    if (*autoPad == "VALID") {
      begin = end = 0;
    } else if (same) {
      // Output ceil(in / stride); the odd element goes last for SAME_UPPER.
      int64_t out = (in + g.strides[d] - 1) / g.strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[d] + extent - in);
      begin = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    int64_t padded = in + begin + end;
    if (padded < extent)
      return node.error() << "spatial dim " << d << " has " << padded
                          << " elements with padding; expected at least the dilated kernel's "
                          << extent;
    g.padBegin.push_back(begin);
    g.padEnd.push_back(end);
    g.output.push_back((padded - extent) / g.strides[d] + 1);
  }
  return g;
}

bool isPatchEmbedding(const ConvGeometry &g) {
  if (g.groups != 1)
    return false;
  for (size_t d = 0; d < g.kernel.size(); ++d)
    if (g.kernel[d] != g.strides[d] || g.dilations[d] != 1 || g.padBegin[d] != 0 ||
        g.padEnd[d] != 0)
      return false;
  return true;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t total = 1;
  for (int64_t dim : dims)
    total *= dim;
  return total;
}

/// The weight as a 2-D [M, C/g * K] matrix. A weight read from the file is
/// the same bytes in either shape, so it is referenced again with the 2-D
/// type: raising and sharding then see a parameter, not a reshape of one.
FailureOr<Value> weightMatrix(NodeContext &node, Value weight) {
  RankedTensorType type = tensorType(weight);
  SmallVector<int64_t> shape = {type.getDimSize(0), product(type.getShape().drop_front())};
  auto stored = weight.getDefiningOp<WeightOp>();
  if (!stored || stored.getStoredShape() || stored.getBoxOffsets() || stored.getStoredType())
    return reshapeTo(node, weight, shape);
  return node.builder()
      .create<WeightOp>(stored.getLoc(), RankedTensorType::get(shape, type.getElementType()),
                        stored.getName(), stored.getFile(), stored.getOffset(), stored.getSize(),
                        DenseI64ArrayAttr(), DenseI64ArrayAttr(), TypeAttr(),
                        DenseI64ArrayAttr(), DenseI64ArrayAttr())
      .getResult();
}

/// x [N, C, *in] -> patches [N, L, C * K], W [M, C, *k] -> linear -> [N, M, *out].
FailureOr<Value> patchEmbedding(NodeContext &node, const ConvGeometry &g, Value x, Value w,
                                Value bias) {
  RankedTensorType type = tensorType(x);
  int64_t spatial = type.getRank() - 2, n = type.getDimSize(0), c = type.getDimSize(1);
  // Drop what the last whole patch leaves over, then split each dim into
  // (patch index, offset in patch): [N, C, o0, k0, o1, k1].
  FailureOr<Value> value = success(x);
  SmallVector<int64_t> split = {n, c}, perm = {0}, patches = {n, product(g.output)};
  for (int64_t d = 0; d < spatial && succeeded(value); ++d) {
    value = sliceAxis(node, *value, 2 + d, 0, g.output[d] * g.kernel[d]);
    split.append({g.output[d], g.kernel[d]});
    perm.push_back(2 + 2 * d);
  }
  perm.push_back(1);
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(3 + 2 * d);
  patches.push_back(c * product(g.kernel));
  value = succeeded(value) ? reshapeTo(node, *value, split) : noValue();
  value = succeeded(value) ? permute(node, *value, perm) : noValue();
  value = succeeded(value) ? reshapeTo(node, *value, patches) : noValue();
  auto matrix = succeeded(value) ? weightMatrix(node, w) : noValue();
  auto transposed = succeeded(matrix) ? node.transpose(*matrix, {1, 0}) : noValue();
  value =
      succeeded(transposed) ? node.create<MatMulOp>(ValueRange{*value, *transposed}) : noValue();
  if (succeeded(value) && bias)
    value = node.create<AddOp>(ValueRange{*value, bias});
  // [N, L, M] -> [N, M, *out]
  int64_t m = tensorType(w).getDimSize(0);
  SmallVector<int64_t> shape = {n, m};
  shape.append(g.output);
  value = succeeded(value) ? permute(node, *value, {0, 2, 1}) : noValue();
  return succeeded(value) ? reshapeTo(node, *value, shape) : noValue();
}

/// The general case: zero padding, a strided slice per kernel offset, one
/// (grouped) matmul.
FailureOr<Value> im2col(NodeContext &node, const ConvGeometry &g, Value x, Value w, Value bias) {
  RankedTensorType type = tensorType(x);
  int64_t spatial = type.getRank() - 2, n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t m = tensorType(w).getDimSize(0), positions = product(g.output);
  int64_t kernelSize = product(g.kernel);
  FailureOr<Value> padded = success(x);
  auto zero = node.scalar(type.getElementType(), 0.0);
  if (failed(zero))
    return failure();
  for (int64_t d = 0; d < spatial && succeeded(padded); ++d)
    padded = padAxis(node, *padded, 2 + d, g.padBegin[d], g.padEnd[d], PadMode::Constant, *zero);
  if (failed(padded))
    return failure();

  // One slice per kernel offset, offsets enumerated row-major like W's dims.
  SmallVector<Value> columns;
  SmallVector<int64_t> column = {n, c, 1}, axes;
  column.append(g.output);
  for (int64_t d = 0; d < spatial; ++d)
    axes.push_back(2 + d);
  for (int64_t offset = 0; offset < kernelSize; ++offset) {
    SmallVector<int64_t> starts(spatial), ends(spatial);
    for (int64_t d = spatial - 1, rest = offset; d >= 0; rest /= g.kernel[d], --d) {
      starts[d] = (rest % g.kernel[d]) * g.dilations[d];
      ends[d] = starts[d] + (g.output[d] - 1) * g.strides[d] + 1;
    }
    auto slice = sliceAxes(node, *padded, axes, starts, ends, g.strides);
    slice = succeeded(slice) ? reshapeTo(node, *slice, column) : noValue();
    if (failed(slice))
      return failure();
    columns.push_back(*slice);
  }
  // [N, C, K, *out] -> [N, g, C/g * K, L] and W -> [g, M/g, C/g * K]; one
  // group needs no group dim: [M, C * K] @ [N, C * K, L].
  int64_t perGroup = c / g.groups * kernelSize;
  SmallVector<int64_t> colsShape = {n, g.groups, perGroup, positions},
                       weightShape = {g.groups, m / g.groups, perGroup};
  if (g.groups == 1) {
    colsShape.erase(colsShape.begin() + 1);
    weightShape.erase(weightShape.begin());
  }
  auto cols = concatAxis(node, columns, 2);
  cols = succeeded(cols) ? reshapeTo(node, *cols, colsShape) : noValue();
  auto weights = succeeded(cols) ? weightMatrix(node, w) : noValue();
  weights = succeeded(weights) ? reshapeTo(node, *weights, weightShape) : noValue();
  auto value = succeeded(weights) ? node.create<MatMulOp>(ValueRange{*weights, *cols}) : noValue();
  SmallVector<int64_t> shape = {n, m};
  shape.append(g.output);
  value = succeeded(value) ? reshapeTo(node, *value, shape) : noValue();
  if (succeeded(value) && bias) {
    SmallVector<int64_t> biasShape(spatial + 1, 1);
    biasShape[0] = m;
    auto broadcast = reshapeTo(node, bias, biasShape);
    value = succeeded(broadcast) ? node.create<AddOp>(ValueRange{*value, *broadcast}) : noValue();
  }
  return value;
}

LogicalResult importConv(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  RankedTensorType x = node.inputType(0), w = node.inputType(1);
  if (x.getRank() < 3 || x.getRank() > 5)
    return node.error() << "input X has shape " << formatShape(x.getShape())
                        << "; expected [N, C, D1, ...] with 1 to 3 spatial dims";
  if (w.getRank() != x.getRank())
    return node.error() << "weight W has shape " << formatShape(w.getShape()) << "; expected rank "
                        << x.getRank() << " like X";
  if (w.getElementType() != x.getElementType())
    return node.error() << "weight W has element type " << w.getElementType() << "; expected X's "
                        << x.getElementType();
  auto g = geometry(node, x, w);
  if (failed(g))
    return failure();
  Value bias;
  if (node.hasInput(2)) {
    RankedTensorType b = node.inputType(2);
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0))
      return node.error() << "bias B has shape " << formatShape(b.getShape()) << "; expected ["
                          << w.getDimSize(0) << "] (one per output channel)";
    bias = node.input(2);
  }
  if (isPatchEmbedding(*g))
    return node.define(patchEmbedding(node, *g, node.input(0), node.input(1), bias));
  return node.define(im2col(node, *g, node.input(0), node.input(1), bias));
}

} // namespace

void registerConvolutionImporters(OpImporterMap &map) { map["Conv"] = {importConv, 1}; }

} // namespace shardc::import
