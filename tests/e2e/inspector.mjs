// End-to-end check of the inspector page in Debian's headless chromium (driven by playwright-core).
// Usage: node inspector.mjs --url http://127.0.0.1:PORT --session demo-zh --marker '[DEBUG:cue=…]'
//          --cue CUE-xxxxxxxx --screenshot out.png --profile /tmp/fresh-dir [--chromium /usr/bin/chromium]
//          [--slashed 'a/b' (a session id with a slash: open it too)]
// Prints one JSON line with what it saw; exits non-zero on the first failed step.
import { chromium } from "playwright-core";

function args(argv) {
  const out = {};
  for (let i = 2; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  return out;
}

const a = args(process.argv);
for (const need of ["url", "session", "marker", "cue", "screenshot", "profile"]) {
  if (!a[need]) { console.error(`missing --${need}`); process.exit(2); }
}
const seen = { steps: [] };
const step = (name) => seen.steps.push(name);

const context = await chromium.launchPersistentContext(a.profile, {
  executablePath: a.chromium || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
    "--no-first-run", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1400, height: 1000 },
  timeout: 60_000,
});
const errors = [];
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.setDefaultTimeout(20_000);

  await page.goto(`${a.url}/inspector/`);
  await page.locator(`#sessions li[data-session="${a.session}"]`).waitFor();
  step("sessions listed");
  seen.sessions = await page.locator("#sessions li").count();

  await page.locator(`#sessions li[data-session="${a.session}"]`).click();
  await page.locator("#turns .turn").first().waitFor();
  await page.locator("#turns .unit").first().waitFor();
  seen.turns = await page.locator("#turns .turn").count();
  seen.units = await page.locator("#turns .unit").count();
  seen.intentBars = await page.locator("#turns .unit .bars").count();
  seen.stateRows = await page.locator("#state-view tr").count();
  step("session opened");

  if (a.slashed) {
    await page.locator(`#sessions li[data-session="${a.slashed}"]`).click();
    await page.locator(`#turns .turn .meta:has-text("${a.slashed}-0")`).waitFor();
    seen.slashedTurns = await page.locator("#turns .turn").count();
    seen.slashedHash = new URL(page.url()).hash;
    step("slashed session opened");
    await page.locator(`#sessions li[data-session="${a.session}"]`).click();
    await page.locator("#session-title", { hasText: a.session }).waitFor();
    await page.locator("#turns .turn").first().waitFor();
  }

  await page.locator("#marker").fill(a.marker);
  await page.locator("#marker-form button").click();
  await page.locator("#recall-view:not([hidden])").waitFor();
  await page.locator(`#recall-body .cue[data-cue="${a.cue}"]`).waitFor();
  seen.cues = await page.locator("#recall-body .cue").count();
  seen.topCue = await page.locator("#recall-body .cue h4 a").first().textContent();
  seen.why = await page.locator("#recall-body .cue .why").first().textContent();
  seen.compareRows = await page.locator("#recall-body table.compare tr").count();
  seen.hash = new URL(page.url()).hash;
  seen.status = await page.locator("#status").textContent();
  step("marker found its recall");

  await page.locator("#health table tr").nth(1).waitFor();
  seen.healthRows = await page.locator("#health table tr").count();
  seen.healthSource = await page.locator("#health-source").textContent();
  step("health panel shown");

  await page.locator("#recall-view").scrollIntoViewIfNeeded();
  await page.screenshot({ path: a.screenshot, fullPage: true });
  step("screenshot");
  seen.errors = errors;
  console.log(JSON.stringify(seen));
} catch (e) {
  seen.errors = errors;
  seen.failure = String(e);
  console.log(JSON.stringify(seen));
  process.exitCode = 1;
} finally {
  await context.close();
}
