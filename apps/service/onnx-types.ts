// ONNX TensorProto.DataType numbers → the lower-case names the protocol uses, and element sizes.
// onnx-proto's generated enum stops at BFLOAT16 (ONNX 1.10); the newer numbers come from onnx.proto
// itself, so models from current exporters still get readable names.

interface ElemType {
  name: string;
  /** Bytes per element; fractional for packed 4-bit and 2-bit types, 0 where variable (string). */
  bytes: number;
}

const TYPES: Record<number, ElemType> = {
  1: { name: 'float32', bytes: 4 },
  2: { name: 'uint8', bytes: 1 },
  3: { name: 'int8', bytes: 1 },
  4: { name: 'uint16', bytes: 2 },
  5: { name: 'int16', bytes: 2 },
  6: { name: 'int32', bytes: 4 },
  7: { name: 'int64', bytes: 8 },
  8: { name: 'string', bytes: 0 },
  9: { name: 'bool', bytes: 1 },
  10: { name: 'float16', bytes: 2 },
  11: { name: 'float64', bytes: 8 },
  12: { name: 'uint32', bytes: 4 },
  13: { name: 'uint64', bytes: 8 },
  14: { name: 'complex64', bytes: 8 },
  15: { name: 'complex128', bytes: 16 },
  16: { name: 'bfloat16', bytes: 2 },
  17: { name: 'float8e4m3fn', bytes: 1 },
  18: { name: 'float8e4m3fnuz', bytes: 1 },
  19: { name: 'float8e5m2', bytes: 1 },
  20: { name: 'float8e5m2fnuz', bytes: 1 },
  21: { name: 'uint4', bytes: 0.5 },
  22: { name: 'int4', bytes: 0.5 },
  23: { name: 'float4e2m1', bytes: 0.5 },
  24: { name: 'float8e8m0', bytes: 1 },
  25: { name: 'uint2', bytes: 0.25 },
  26: { name: 'int2', bytes: 0.25 },
};

export function elemTypeName(t: number | null | undefined): string {
  if (!t) return 'undefined';
  return TYPES[t]?.name ?? `type${t}`;
}

export function elemTypeBytes(t: number | null | undefined): number {
  return (t && TYPES[t]?.bytes) || 0;
}

/** A data type number onnx.proto defines (0 is UNDEFINED, which no tensor may have). */
export function isKnownElemType(t: number | null | undefined): boolean {
  return !!t && Object.hasOwn(TYPES, t);
}

/** Bits per element: 4 and 2 for the packed types, 0 for string (variable). */
export function elemTypeBits(t: number | null | undefined): number {
  return Math.round(elemTypeBytes(t) * 8);
}
