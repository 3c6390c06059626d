// Shown after signing out or when signing in failed: nothing is loaded until the user signs in again.
import { startSignIn } from "../auth";

export function SignedOut({ message }: { message: string }) {
  return (
    <main class="signed-out">
      <h1>Console</h1>
      <p role="status">{message}</p>
      <button type="button" onClick={() => void startSignIn("#/")}>
        Sign in
      </button>
    </main>
  );
}
