// Choosing a new password: at the first sign-in (or after an administrator's reset or the password's expiry),
// where the peer's token allows nothing else, and on the account page at any time.
import { useState } from "preact/hooks";
import { api } from "../api";
import { refresh } from "../auth";
import { ErrorNote, useAction } from "../common";
import { TextField } from "../fields";

/** The form: the current password, the new one twice; on success the token is refreshed (no longer restricted). */
export function PasswordForm({
  onChanged,
  submitLabel = "Change password",
}: {
  onChanged(): void;
  submitLabel?: string;
}) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const act = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setMismatch(next !== repeat);
    if (next !== repeat) return;
    void act.run(async () => {
      await api("/auth/users/me/password", { method: "PUT", json: { password: next, old_password: current } });
      // A refresh after the change yields a token with the user's own scopes.
      await refresh();
      setCurrent("");
      setNext("");
      setRepeat("");
      onChanged();
    });
  };
  const field = (label: string, value: string, set: (v: string) => void, autocomplete: string) => (
    <TextField label={label} type="password" value={value} required autocomplete={autocomplete} onValue={set} />
  );
  return (
    <form class="stacked" onSubmit={submit} aria-label="Change password">
      {field("Current password", current, setCurrent, "current-password")}
      {field("New password", next, setNext, "new-password")}
      {field("Repeat the new password", repeat, setRepeat, "new-password")}
      {mismatch && (
        <p role="alert" class="error">
          The new password and its repetition differ.
        </p>
      )}
      <ErrorNote error={act.error} />
      <button type="submit" disabled={act.busy}>
        {submitLabel}
      </button>
    </form>
  );
}

/** The whole page shown instead of the console while the password must be changed first. */
export function FirstPasswordPage({ onDone }: { onDone(): void }) {
  return (
    <main id="main" class="narrow">
      <section class="card" aria-label="Choose a new password">
        <header class="card-head">
          <h2>Choose a new password</h2>
        </header>
        <p>Your password is temporary or has expired. Choose a new one to continue to the console.</p>
        <PasswordForm onChanged={onDone} submitLabel="Set password and continue" />
      </section>
    </main>
  );
}
