// Numeric limits of build options, in a module of their own: the renderer needs them (trtexec
// parsing) without loading zod, whose JIT probe trips the page's Content-Security-Policy.
/**
 * Upper bounds that keep every size exact once converted to bytes (a double holds integers up to
 * 2^53 exactly) and every count within TensorRT's 32-bit parameters, so an absurd number is an
 * error naming the field instead of a silently wrapped or rounded value.
 */
export const OPTION_LIMITS = {
  poolMiB: 2 ** 33,
  poolKiB: 2 ** 43,
  int32: 2 ** 31 - 1,
} as const;
