// Which graph inputs are probably shape tensors: values TensorRT needs at build time (a Reshape
// target, a Slice bound), given per profile as min/opt/max *values* rather than dims. A heuristic
// from the graph alone: an int32/int64 input of rank 0 or 1 that feeds, directly, an operand
// below. TensorRT's parser decides for real; this only lets the surfaces ask for the right thing.

/** ai.onnx operators and the input positions that carry a shape, bound, size or count. */
const SHAPE_OPERANDS: Readonly<Record<string, readonly number[]>> = {
  Reshape: [1], // shape
  Expand: [1], // shape
  Tile: [1], // repeats
  ConstantOfShape: [0], // input (the shape)
  Slice: [1, 2, 3, 4], // starts, ends, axes, steps
  Resize: [3], // sizes (opset 11+)
  Range: [0, 1, 2], // start, limit, delta
  Pad: [1, 3], // pads, axes
  TopK: [1], // k
  Unsqueeze: [1], // axes (opset 13+)
  Squeeze: [1], // axes (opset 13+)
  OneHot: [1], // depth
  Upsample: [1], // scales
};

/** Names a node of `opType` (domain ai.onnx) uses as shape operands. */
export function shapeOperandUses(opType: string, inputs: readonly string[] | null | undefined): string[] {
  const at = SHAPE_OPERANDS[opType];
  if (!at || !inputs) return [];
  return at.map((i) => inputs[i]).filter((n): n is string => typeof n === 'string' && n !== '');
}

/** The graph inputs (in graph order) that look like shape tensors, given the names used as shape operands. */
export function shapeTensorInputs(inputs: ReadonlyArray<{ name: string; elemType: string; shape: readonly unknown[] }>, uses: ReadonlySet<string>): string[] {
  return inputs.filter((i) => (i.elemType === 'int32' || i.elemType === 'int64') && i.shape.length <= 1 && uses.has(i.name)).map((i) => i.name);
}
