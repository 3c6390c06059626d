// Timestamps as the accounts area writes them: RFC 3339 UTC with whole seconds.
export const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
