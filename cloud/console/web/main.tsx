// Entry: finish or start signing in, then show the console. No token is ever stored outside memory.
import "uplot/dist/uPlot.min.css";
import { render } from "preact";
import { finishSignIn, mustChangePassword, startSignIn } from "./auth";
import { App } from "./app";
import { FirstPasswordPage } from "./pages/password";
import { SignedOut } from "./pages/signed-out";

const root = document.getElementById("app")!;

async function boot(): Promise<void> {
  const params = new URLSearchParams(location.search);
  if (params.has("code") || params.has("error")) {
    try {
      await finishSignIn(params);
    } catch (err) {
      render(<SignedOut message={(err as Error).message} />, root);
      return;
    }
  } else if (location.hash === "#/signed-out") {
    render(<SignedOut message="You are signed out." />, root);
    return;
  } else {
    await startSignIn();
  }
  const showConsole = () => render(<App />, root);
  // A temporary or expired password: the token allows only choosing a new one, so that comes first.
  if (mustChangePassword()) render(<FirstPasswordPage onDone={showConsole} />, root);
  else showConsole();
}

void boot();
