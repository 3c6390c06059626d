// The measurement page's markers panel in real Chromium against a real cloud peer: markers made through
// the API listed, point and range markers added from the form (checked through the API), one deleted;
// and the CSV download carrying data_name.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { chunksMessage, createMeasurement, P, uploadProto, uuid } from "../cloud/measurements/helpers.js";
import { signIn, withPeerAndBrowser } from "./helpers.js";

describe("web console: measurement markers", () => {
  const ctx = withPeerAndBrowser();

  it("lists markers, adds point and range markers from the form, and deletes one", async () => {
    const { peer, call, page } = ctx;
    const m = (await createMeasurement(call, { name: "with markers" })).uuid as string;
    const api = `${P}/measurements/${m}/markers`;
    expect(
      (
        await call(api, {
          method: "POST",
          json: {
            type: "point",
            name: "from the API",
            detail: { occurred_elapsed_time: 2_500_000 },
            tag: { source: "api" },
          },
        })
      ).status,
    ).toBe(201);
    await uploadProto(
      call,
      chunksMessage(m, uuid(), [[{ name: "1/speed", type: "string", elapsed: 1_000n, payload: Buffer.from("fast") }]]),
    );

    await signIn(page, peer.url, "admin", ADMIN_PASSWORD);
    await page.goto(`${peer.url}/console/#/measurement/00000000-0000-0000-0000-000000000000/${m}`);
    const table = page.getByRole("table", { name: "Markers" });
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 30_000 }).toBe(1);
    expect(await table.locator("tbody tr").first().textContent()).toContain("from the API");
    expect(await table.locator("tbody tr").first().textContent()).toContain("2.500");

    const form = page.getByRole("form", { name: "New marker" });
    await form.getByLabel("Marker name").fill("hard braking");
    await form.getByLabel("At (s after base time)").fill("1.25");
    await form.getByLabel("Tags").fill("event=brake, checked");
    await form.getByRole("button", { name: "Add marker" }).click();
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 30_000 }).toBe(2);

    await form.getByLabel("Kind").selectOption("range");
    await form.getByLabel("Marker name").fill("lap");
    await form.getByLabel("From (s after base time)").fill("3");
    await form.getByLabel("To (s)").fill("4.5");
    await form.getByRole("button", { name: "Add marker" }).click();
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 30_000 }).toBe(3);

    const stored = (await call(api)).body.items as Array<{
      uuid: string;
      name: string;
      type: string;
      detail: object;
      tag: object;
    }>;
    expect(stored.map((k) => [k.name, k.type, k.detail, k.tag])).toEqual([
      ["hard braking", "point", { occurred_elapsed_time: 1_250_000 }, { event: "brake", checked: "" }],
      ["from the API", "point", { occurred_elapsed_time: 2_500_000 }, { source: "api" }],
      ["lap", "range", { start_elapsed_time: 3_000_000, end_elapsed_time: 4_500_000 }, {}],
    ]);

    await page.getByRole("button", { name: "Delete marker hard braking" }).click();
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 30_000 }).toBe(2);
    expect((await call(api)).body.items.map((k: { name: string }) => k.name)).toEqual(["from the API", "lap"]);

    // The CSV download names each point's data_name.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    const csv = fs
      .readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\n");
    expect(csv[0]).toBe("time,data_type,data_id,data_name,value");
    expect(csv[1]).toMatch(/^[^,]+,string,1\/speed,1\/speed,fast$/);
  }, 120_000);
});
