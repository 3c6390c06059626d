/** The version of the edge agent API this agent implements (GET /api/v1/version). */
export const API_VERSION = "1.2.1";
