// glibc malloc settings the edge agent and the cloud peer run with: deploy/edge-agent.service and
// deploy/cloud-peer.service set them, and the benchmarks start both with them, so what they measure is what a
// device and a server run. They are read when the process starts, hence in its environment and not set from
// inside. Chunk and frame buffers (64 KiB and more) are ArrayBuffers from malloc; with glibc's default the mmap
// threshold rises to the largest block freed, so later blocks came from the heap and arenas, and what a burst
// freed there stayed in the RSS for good (docs/datapath.md "Steady state"). A fixed threshold gives those blocks
// their own mappings, returned to the system when freed; two arenas bound what the threads' own arenas hold.
export const MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072",
};
