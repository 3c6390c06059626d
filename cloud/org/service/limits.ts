// Limits of the organisation tree (documented in docs/access-control.md).
/** A top-level group has depth 1; a sub-group may not be created below depth MAX_GROUP_DEPTH. */
export const MAX_GROUP_DEPTH = 5;
/** Projects directly inside one group. */
export const MAX_PROJECTS_PER_GROUP = 1000;
