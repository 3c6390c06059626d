// Which socket agentctl talks to: --socket, else AGENT_SOCKET, else the development agent's socket when it exists
// (`edge-agent` started in this folder with its defaults), else the service's (deploy/edge-agent.service and the
// Debian package put it in systemd's runtime directory).
import fs from "node:fs";

export const DEV_SOCKET = "./data/agent/agent.sock";
export const SERVICE_SOCKET = "/run/edge-agent/agent.sock";

export interface SocketChoice {
  path: string;
  /** How it was chosen, for the error when nothing answers there. */
  how: string;
}

export function chooseSocket(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): SocketChoice {
  if (flag) return { path: flag, how: "--socket" };
  if (env.AGENT_SOCKET) return { path: env.AGENT_SOCKET, how: "AGENT_SOCKET" };
  if (exists(DEV_SOCKET)) return { path: DEV_SOCKET, how: `found; ${SERVICE_SOCKET} not tried` };
  return {
    path: SERVICE_SOCKET,
    how: `${DEV_SOCKET} does not exist; give --socket or AGENT_SOCKET for another`,
  };
}

function exists(p: string): boolean {
  try {
    return fs.statSync(p).isSocket();
  } catch {
    return false;
  }
}
