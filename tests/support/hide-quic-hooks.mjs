// Module resolve hook for hide-quic.mjs: @matrixai/quic resolves as if it was not installed.
export async function resolve(specifier, context, next) {
  if (specifier === "@matrixai/quic" || specifier.startsWith("@matrixai/quic/")) {
    const err = new Error(`Cannot find package '${specifier}' (hidden: a platform without the QUIC library)`);
    err.code = "ERR_MODULE_NOT_FOUND";
    throw err;
  }
  return next(specifier, context);
}
