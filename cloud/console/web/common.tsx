// Small shared pieces of the pages: errors, empty states, pagers, the project picker.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api } from "./api";
import { DEFAULT_PROJECT } from "./format";
import { useLoad } from "./hooks";

export function ErrorNote({ error }: { error: Error | undefined }) {
  return error ? (
    <p role="alert" class="error">
      {error.message}
    </p>
  ) : null;
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function Pager({
  page,
  total,
  perPage,
  onPage,
}: {
  page: number;
  total: number;
  perPage: number;
  onPage(p: number): void;
}) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages} ({total} in all)
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

export interface ProjectInfo {
  uuid: string;
  name: string;
}

/** The projects the user may see: all of them for a super user, else the user's own; the default project last. */
export function useProjects(isSuper: boolean) {
  return useLoad(async () => {
    const list = await api<{ items: ProjectInfo[] }>(
      isSuper ? "/auth/projects?per_page=200" : "/auth/users/me/projects?per_page=200",
    );
    return [...list.items, { uuid: DEFAULT_PROJECT, name: "Default project" }];
  }, [isSuper]);
}

export function ProjectPicker({
  projects,
  value,
  onChange,
}: {
  projects: ProjectInfo[];
  value: string;
  onChange(uuid: string): void;
}) {
  return (
    <label>
      Project{" "}
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {projects.map((p) => (
          <option value={p.uuid} key={p.uuid}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A secret the server shows once (temporary password, API token, edge secret): until dismissed. */
export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone(): void }) {
  return (
    <div class="shown-once" role="status">
      <p>
        {label} (shown once; copy it now): <code data-testid="secret">{value}</code>
      </p>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

/** Turns a form submit into a call, with the API's error shown beside the form. */
export function useAction() {
  const [state, setState] = useState<{ busy: boolean; error?: Error }>({ busy: false });
  const run = async (fn: () => Promise<void>) => {
    setState({ busy: true });
    try {
      await fn();
      setState({ busy: false });
    } catch (e) {
      setState({ busy: false, error: e as Error });
    }
  };
  return { ...state, run };
}
