// The environment of a device connector the agent starts. An allow-list, not a deny-list: a variable a socket
// user may set in `launch.environment` makes some program load code of their choosing (LD_PRELOAD, NODE_OPTIONS,
// OPENSSL_CONF, JDK_JAVA_OPTIONS, PYTHONWARNINGS, ...), and the list of such variables has no end. And of the
// agent's own environment a connector gets only what it needs to run, so that secrets given to the agent (a
// systemd EnvironmentFile, the shell that started it) do not leak into third-party programs.

/** What a connector may be given, by `launch.environment` or from the agent's environment. */
const ALWAYS = [/^TZ$/, /^LANG$/, /^LANGUAGE$/, /^LC_[A-Z_]+$/, /^CONNECTOR_\w+$/];
/** Of the agent's environment, what a program needs to run (not settable through the socket: PATH picks programs). */
const INHERITED = ["PATH", "HOME", "USER", "LOGNAME", "TMPDIR"];

/** The names the agent's administrator allows (`--allow-env`): exact names, or a prefix ending in `*`. */
const allowedBy = (allowEnv: readonly string[], name: string) =>
  allowEnv.some((a) => (a.endsWith("*") ? name.startsWith(a.slice(0, -1)) : a === name));

/** Whether `launch.environment` may set `name`. */
export const launchVariableAllowed = (name: string, allowEnv: readonly string[] = []): boolean =>
  ALWAYS.some((re) => re.test(name)) || allowedBy(allowEnv, name);

/** The variables the connector sees: the allowed part of the agent's environment, then the launch's own. */
export function connectorEnvironment(
  agentEnv: NodeJS.ProcessEnv,
  launchEnv: Record<string, string> | undefined,
  allowEnv: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(agentEnv))
    if (value !== undefined && (INHERITED.includes(name) || launchVariableAllowed(name, allowEnv))) out[name] = value;
  return { ...out, ...launchEnv };
}

/** The rule, as said in a refusal. */
export const LAUNCH_ENV_RULE =
  "a launch may set only TZ, LANG, LANGUAGE, LC_*, CONNECTOR_* and the variables the agent's administrator allows by name with --allow-env";
