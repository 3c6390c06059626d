// Server-rendered pages: the sign-in form and the error page. Plain HTML and CSS, no JavaScript.
import { reply, type Reply } from "../../http/route.js";

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Headers of every page: no framing (clickjacking), no caching, no referrer carrying the query. */
export const PAGE_HEADERS = {
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  "Cache-Control": "no-store",
  Pragma: "no-cache",
  "Referrer-Policy": "no-referrer",
};

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem 2.5rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);width:100%;max-width:22rem}
h1{font-size:1.3rem;margin:0 0 .4rem}p{color:#444}label{display:block;margin:1rem 0 .3rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #999;border-radius:4px;font-size:1rem}
.actions{display:flex;gap:.5rem;margin-top:1.4rem}button{padding:.55rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #1a56db;cursor:pointer}
button.primary{background:#1a56db;color:#fff}button.secondary{background:#fff;color:#1a56db}
.error{background:#fde8e8;color:#9b1c1c;padding:.6rem .8rem;border-radius:4px}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export function signInPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  error?: string;
  username?: string;
}): string {
  return page(
    "Sign in",
    `<h1>Sign in</h1><p>to continue to <strong>${escapeHtml(o.clientName)}</strong></p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ""}
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${escapeHtml(o.username ?? "")}" autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit" name="action" value="sign-in">Sign in</button>
<button class="secondary" type="submit" name="action" value="cancel" formnovalidate>Cancel</button></div>
</form>`,
  );
}

export function errorPage(status: number, error: string, description: string): Reply {
  const html = page(
    "Authorization error",
    `<h1>Authorization error</h1><p class="error" role="alert">${escapeHtml(description)}</p><p>Error code: <code>${escapeHtml(error)}</code></p>`,
  );
  return reply(status, html, PAGE_HEADERS, "text/html; charset=utf-8");
}

export const htmlReply = (status: number, html: string): Reply =>
  reply(status, html, PAGE_HEADERS, "text/html; charset=utf-8");
