// The settings agentctl manages, with their API paths and config-file section names.
export interface ListResource {
  /** agentctl words, e.g. ["device-connector", "upstream"]. */
  words: string[];
  path: string;
  /** Section in the config file (as the real product names them). */
  section: string;
  statePath?: string;
}

export const LISTS: ListResource[] = [
  { words: ["upstream"], path: "/upstreams", section: "upstream", statePath: "/upstreams/-/states" },
  { words: ["downstream"], path: "/downstreams", section: "downstream", statePath: "/downstreams/-/states" },
  {
    words: ["device-connector", "upstream"],
    path: "/device-connectors/upstream",
    section: "device_connectors_upstream",
    statePath: "/device-connectors/upstream/-/states",
  },
  {
    words: ["device-connector", "downstream"],
    path: "/device-connectors/downstream",
    section: "device_connectors_downstream",
    statePath: "/device-connectors/downstream/-/states",
  },
  { words: ["filter", "upstream"], path: "/filters/upstream", section: "filters_upstream" },
  { words: ["filter", "downstream"], path: "/filters/downstream", section: "filters_downstream" },
];

export const SINGLES = [
  { word: "connection", path: "/connection", section: "connection" },
  { word: "transport", path: "/transport", section: "transport" },
  { word: "deferred", path: "/deferred-upload", section: "deferred_upload" },
] as const;

export const byWords = (words: string[]) => LISTS.find((l) => l.words.join(" ") === words.join(" "));
export const bySection = (section: string) => LISTS.find((l) => l.section === section);
