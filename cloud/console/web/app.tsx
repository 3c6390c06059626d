// The console's frame: header with navigation and the signed-in user, and the page of the route.
import { api } from "./api";
import { signOut } from "./auth";
import { ErrorNote } from "./common";
import { useLoad, useRoute } from "./hooks";
import { MeasurementsPage } from "./pages/measurements";
import { MeasurementPage } from "./pages/measurement";
import { EdgesPage } from "./pages/edges";
import { OrgPage } from "./pages/org";
import { AccountPage } from "./pages/account";
import { ClientsPage } from "./pages/clients";

export interface Me {
  uuid: string;
  name: string;
  is_super: boolean;
  roles: string[];
}

const NAV = [
  ["measurements", "Measurements"],
  ["edges", "Edges"],
  ["org", "Organisation"],
  ["account", "Account"],
  ["clients", "OAuth2 clients"],
] as const;

async function doSignOut() {
  await signOut().catch(() => undefined);
  location.hash = "#/signed-out";
  location.reload();
}

export function App() {
  const route = useRoute();
  const me = useLoad(() => api<Me>("/auth/users/me"), []);
  const page = route.parts[0] ?? "measurements";
  return (
    <>
      <header class="top">
        <a class="brand" href="#/measurements">
          cloud-peer console
        </a>
        <nav aria-label="Main">
          {NAV.map(([id, label]) => (
            <a
              key={id}
              href={`#/${id}`}
              aria-current={page === id || (id === "measurements" && page === "measurement") ? "page" : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="who">
          {me.data?.name ?? ""}
        </span>
        <button type="button" class="signout" onClick={() => void doSignOut()}>
          Sign out
        </button>
      </header>
      <main id="main">
        <ErrorNote error={me.error} />
        {me.data && <Page page={page} parts={route.parts} query={route.query} me={me.data} />}
      </main>
    </>
  );
}

function Page({ page, parts, query, me }: { page: string; parts: string[]; query: URLSearchParams; me: Me }) {
  switch (page) {
    case "measurement":
      // Keyed by the measurement: its range, zoom and choices start afresh on another one.
      return <MeasurementPage key={`${parts[1]}/${parts[2]}`} project={parts[1] ?? ""} uuid={parts[2] ?? ""} />;
    case "edges":
      return <EdgesPage me={me} />;
    case "org":
      return <OrgPage me={me} />;
    case "account":
      return <AccountPage me={me} />;
    case "clients":
      return <ClientsPage me={me} />;
    default:
      return <MeasurementsPage me={me} query={query} />;
  }
}
