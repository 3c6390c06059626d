// Module resolve hook for hide-quic.mjs and hide-sqlite3.mjs: the packages named in `data.packages` resolve
// as if they were not installed (the error a missing optional dependency gives).
let hidden = [];
let why = "";

export function initialize(data) {
  hidden = data.packages;
  why = data.why;
}

export async function resolve(specifier, context, next) {
  if (hidden.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
    const err = new Error(`Cannot find package '${specifier}' (hidden: ${why})`);
    err.code = "ERR_MODULE_NOT_FOUND";
    throw err;
  }
  return next(specifier, context);
}
