// What each Debian package holds (scripts/package-deb.mjs makes them) and its maintainer scripts: a system user
// of its own, its data folder, the systemd unit enabled and started where systemd runs, and on purge the data
// and the user removed, as Debian packages do.

export const PACKAGES = [
  {
    name: "edge-agent",
    summary: "edge agent: device connectors to an intdash-compatible cloud over iSCP v2",
    description: [
      "Takes measurement data from device connectors over FIFOs, keeps it in a durable",
      "queue and streams it to the cloud over iSCP v2 (WebSocket or QUIC).",
      "Commands: edge-agent (the service), agentctl (its command API).",
    ],
    // The sample connector ships for a first run (docs/guide/device.md).
    // The agent runs from its bundle (scripts/build.mjs), agentctl and the connector from dist/'s files.
    entries: ["bundle/edge-agent.mjs", "runtime/cli/agentctl.js", "runtime/connectors/sample-connector.js"],
    bins: ["edge-agent", "agentctl"],
    depends: "nodejs (>= 20.17), nodejs (<< 25), passwd",
    docs: ["docs/guide/device.md", "docs/agent-api.md"],
    dataMode: "0700",
  },
  {
    name: "cloud-peer",
    summary: "self-hosted cloud peer: intdash-compatible REST, OAuth 2.0 and iSCP v2 broker",
    description: [
      "Users, edges, projects and access control; an iSCP v2 broker that stores",
      "measurements in SQLite (or PostgreSQL) and a web console.",
    ],
    entries: ["cloud/main.js"],
    // The console's bundle is served from files, not imported; sqlite3 is loaded when the store is SQLite.
    distDirs: ["console"],
    packages: ["sqlite3"],
    bins: ["cloud-peer"],
    depends: "nodejs (>= 20.17), nodejs (<< 25), passwd",
    docs: ["docs/guide/cloud.md", "docs/guide/scale-out.md"],
    dataMode: "0700",
  },
];

const SYSTEMD = "[ -d /run/systemd/system ] && command -v systemctl >/dev/null";

/** postinst, prerm and postrm of a package. */
export function maintainerScripts({ name, dataMode }) {
  return {
    postinst: `#!/bin/sh
set -e
if [ "$1" = configure ]; then
  if ! getent passwd ${name} >/dev/null; then
    useradd --system --user-group --home-dir /var/lib/${name} --no-create-home --shell /usr/sbin/nologin ${name}
  fi
  install -d -m ${dataMode} -o ${name} -g ${name} /var/lib/${name}
  if ${SYSTEMD}; then
    systemctl daemon-reload
    systemctl enable ${name}.service >/dev/null 2>&1 || true
    if [ -n "$2" ]; then systemctl try-restart ${name}.service || true; else systemctl start ${name}.service || true; fi
  fi
fi
exit 0
`,
    prerm: `#!/bin/sh
set -e
if [ "$1" = remove ] && ${SYSTEMD}; then
  systemctl stop ${name}.service || true
  systemctl disable ${name}.service >/dev/null 2>&1 || true
fi
exit 0
`,
    postrm: `#!/bin/sh
set -e
if ${SYSTEMD}; then systemctl daemon-reload || true; fi
# Remove keeps the data and the user (a reinstall finds them); purge removes both.
if [ "$1" = purge ]; then
  rm -rf /var/lib/${name}
  if getent passwd ${name} >/dev/null; then userdel ${name} || true; fi
  if getent group ${name} >/dev/null; then groupdel ${name} 2>/dev/null || true; fi
fi
exit 0
`,
  };
}
