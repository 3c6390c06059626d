// Entry: finish or start signing in, then show the console. No token is ever stored outside memory.
import "uplot/dist/uPlot.min.css";
import { render, type VNode } from "preact";
import { finishSignIn, mustChangePassword, startSignIn } from "./auth";
import { App } from "./app";
import { FirstPasswordPage } from "./pages/password";
import { SignedOut } from "./pages/signed-out";

const root = document.getElementById("app")!;
let shown = false;
/** Renders into the root; the first time it first removes the page's loading text (render keeps what it did not make). */
function show(page: VNode): void {
  if (!shown) root.replaceChildren();
  shown = true;
  render(page, root);
}

async function boot(): Promise<void> {
  const params = new URLSearchParams(location.search);
  if (params.has("code") || params.has("error")) {
    try {
      await finishSignIn(params);
    } catch (err) {
      show(<SignedOut message={(err as Error).message} />);
      return;
    }
  } else if (location.hash === "#/signed-out") {
    show(<SignedOut message="You are signed out." />);
    return;
  } else {
    await startSignIn();
  }
  const showConsole = () => show(<App />);
  // A temporary or expired password: the token allows only choosing a new one, so that comes first.
  if (mustChangePassword()) show(<FirstPasswordPage onDone={showConsole} />);
  else showConsole();
}

void boot();
