// A minimal cookie-keeping HTTP "browser" for driving the authorization endpoint and sign-in page
// step by step (redirects are not followed, so each hop can be inspected).
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  absorb(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", this.header());
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    this.absorb(res);
    return res;
  }
}

/** The value of a hidden input in a page. */
export const hiddenField = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** Signs in through the page the way a browser would: GET the page, POST the form. */
export async function signInThroughPage(
  jar: CookieJar,
  base: string,
  signInUrl: string,
  username: string,
  password: string,
): Promise<Response> {
  const url = new URL(signInUrl, base).toString();
  const page = await jar.fetch(url);
  const html = await page.text();
  const csrf = hiddenField(html, "csrf")!;
  return jar.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf, username, password, action: "sign-in" }).toString(),
  });
}
