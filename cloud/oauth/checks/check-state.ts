// state is required (the spec's anti-CSRF value) and returned unchanged.
import { AuthorizationError, type Check } from "./context.js";

export const MAX_STATE = 2048;

export const checkState: Check = (req) => {
  const state = req.params.state;
  if (!state) throw new AuthorizationError("invalid_request", "state is missing");
  if (state.length > MAX_STATE)
    throw new AuthorizationError("invalid_request", `state is longer than ${MAX_STATE} characters`);
};
