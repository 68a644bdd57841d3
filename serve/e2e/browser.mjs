// End-to-end test of lemmings serve in Debian's headless chromium, driven by
// playwright-core. The Go test TestBrowser (serve/browser_test.go) prepares the
// runs, starts the server and runs this script with:
//   BASE_URL, TOKEN (the server's access token), DONE_RUN (the demo's finished
//   run), PAUSED_RUN (paused for its milestones), CHROMIUM (the browser),
//   SHOTS_DIR (screenshots go there).
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const base = process.env.BASE_URL;
const token = process.env.TOKEN;
const doneRun = process.env.DONE_RUN;
const pausedRun = process.env.PAUSED_RUN;
const shots = process.env.SHOTS_DIR || fs.mkdtempSync(path.join(os.tmpdir(), "shots-"));
assert.ok(base && token && doneRun && pausedRun, "BASE_URL, TOKEN, DONE_RUN and PAUSED_RUN are required");

const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "lemmings-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1200, height: 800 },
});
const problems = [];
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(20000);
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console: " + m.text()); });
  // Screenshots for docs/serve.md: the viewport, or one part of the page cut
  // to at most maxHeight pixels, so each PNG stays small.
  const shot = async (name, locator, maxHeight = 900) => {
    const file = path.join(shots, name + ".png");
    if (!locator) {
      await page.screenshot({ path: file });
    } else {
      await locator.scrollIntoViewIfNeeded();
      const box = await locator.boundingBox();
      const top = box.y + (await page.evaluate(() => window.scrollY));
      await page.screenshot({ path: file, fullPage: true,
        clip: { x: Math.max(0, box.x - 8), y: Math.max(0, top - 8), width: Math.min(box.width + 16, 1200), height: Math.min(box.height + 16, maxHeight) } });
    }
    step(`screenshot ${file} (${fs.statSync(file).size} bytes)`);
  };

  // Without the token the server answers nothing (asked from outside the
  // page, whose console must stay clean); the printed URL's token leaves a
  // cookie and is dropped from the address.
  assert.equal((await fetch(base + "/")).status, 401);
  await page.goto(base + "/?token=" + token);
  assert.equal(new URL(page.url()).search, "", "the token stays in the address bar");

  // Runs: both runs, with status, remit and counts.
  await page.goto(base + "/");
  const doneRow = page.locator(`tr[data-run="${doneRun}"]`);
  await doneRow.waitFor();
  assert.match(await doneRow.innerText(), /done/);
  assert.match(await doneRow.innerText(), /Make the test suite pass/);
  assert.match(await page.locator(`tr[data-run="${pausedRun}"]`).innerText(), /paused/);
  await shot("runs", page.locator("main"));
  step("runs page");

  // The demo's run: its board and its report.
  await page.click(`a[href="/runs/${doneRun}"]`);
  await page.waitForURL(`**/runs/${doneRun}`);
  const board = page.locator("#board");
  assert.equal(await board.locator(".milestone").count(), 2, "two milestones");
  for (const task of ["t1", "t2", "t3", "t4"]) {
    assert.equal(await board.locator(`li.task.done[data-task="${task}"]`).count(), 1, `task ${task} done on the board`);
  }
  assert.equal(await page.locator('svg.flow g.node.current').getAttribute("data-node"), "__end__");
  const report = page.locator("#report article.markdown");
  assert.match(await report.innerText(), /lemmings report/);
  assert.match(await report.innerText(), /Tasks done/i);
  assert.ok(await page.locator("#gates .gaterun").count() >= 4, "gate results shown");
  assert.ok(await page.locator("#commits details.commit").count() >= 4, "commits shown");
  assert.equal(await page.locator("#usage svg.chart").count(), 2, "token and cost charts");
  // The events count is of the timeline's rows (a model call's progress ticks are not rows).
  assert.equal(Number(await page.locator("#events-count").getAttribute("data-count")), await page.locator("#events-body tr").count(),
    "the events count is the number of rows");
  await shot("run", page.locator("#live"));
  await shot("run-events", page.locator("#events"), 520);
  assert.ok(await page.locator("#gates details.gate[open] pre").count() >= 1, "a failing gate shows its output");
  await shot("run-gates", page.locator("#gates"), 700);
  await page.locator("#commits details.commit").first().locator("summary").click();
  await shot("run-commits", page.locator("#commits"), 700);
  await shot("run-usage", page.locator("#usage"));
  await shot("run-supervisors", page.locator("#steering"), 700);
  await shot("run-report", page.locator("#report"), 800);
  step("run page: board, graph, gates, commits, charts, report");

  // Knowledge: confirm a provisional document of the demo's run.
  await page.click('header a[href="/knowledge"]');
  const item = page.locator(`.review[data-run="${doneRun}"][data-doc="conventions/doc-comments.md"]`);
  await item.waitFor();
  assert.match(await item.innerText(), /provisional/);
  await shot("knowledge", page.locator("main"), 1000);
  await item.locator("button.confirm").click();
  await page.locator("#notice").waitFor();
  assert.match(await page.locator("#notice").innerText(), /confirmed conventions\/doc-comments\.md: committed on lemmings\//);
  assert.equal(await page.locator(`.review[data-run="${doneRun}"][data-doc="conventions/doc-comments.md"]`).count(), 0, "confirmed doc left the queue");
  const row = page.locator(`table.docs tr[data-doc="conventions/doc-comments.md"]`);
  assert.match(await row.innerText(), /established/);
  await row.locator("summary").click();
  assert.match(await row.innerText(), /user.*status provisional → established/);
  await shot("knowledge-confirmed", page.locator("#docs"), 800);
  step("knowledge: confirmed conventions/doc-comments.md");

  // A paused run: approve it and watch its events arrive.
  await page.goto(base + "/runs/" + pausedRun);
  assert.match(await page.locator("#live h1").innerText(), /paused/);
  await shot("paused", page.locator("#live .summary"));
  // Tell the paused run something: the message waits for its next checkpoint.
  await page.fill("#tell textarea[name=message]", "Add a doc comment to MeanWordLength in textstats.go");
  await page.click("#tell-send");
  await page.waitForURL(`**/runs/${pausedRun}#tell`);
  assert.match(await page.locator("#tell ul.tells").innerText(), /waiting for the run/);
  step("told the paused run");
  const before = Number(await page.locator("#events-count").getAttribute("data-count"));
  await page.click("#approve");
  await page.waitForURL(`**/runs/${pausedRun}`);
  const resumed = await page.locator("#resume-status").innerText();
  assert.doesNotMatch(resumed, /…\./, "no stray full stop after running…: " + resumed);
  await page.locator("#events-body tr.fresh").first().waitFor({ timeout: 30000 });
  step("first live event arrived");
  await page.waitForFunction(() => document.querySelectorAll("#events-body tr.fresh").length >= 6, null, { timeout: 30000 });
  assert.ok(Number(await page.locator("#events-count").getAttribute("data-count")) > before, "event count grew");
  // The board follows the run without a reload: a task appears in progress or done.
  await page.locator("#board li.task.doing, #board li.task.done").first().waitFor({ timeout: 30000 });
  await shot("run-live", page.locator("#live"));
  const liveKinds = await page.locator("#events-body tr.fresh").evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  assert.ok(liveKinds.includes("node_start") && liveKinds.includes("checkpoint"), "node and checkpoint events streamed: " + liveKinds.join(","));
  step(`${liveKinds.length} events arrived live`);
  // At the end the page shows the finished run with its report.
  await page.waitForFunction(() => /done/.test(document.querySelector("#live h1")?.textContent || ""), null, { timeout: 90000 });
  await page.locator("#report article.markdown").waitFor({ timeout: 20000 });
  step("approved run done, report shown");
  // The message became a directive of the user's, shown with it.
  await page.reload();
  assert.match(await page.locator("#tell ul.tells").innerText(), /^d\d+ Add a doc comment/m);
  assert.match(await page.locator("#directives").innerText(), /user/);
  step("the told message shown with its directive");

  // A phone, 390 px wide: no page scrolls sideways, and a run id stays on one line.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const url of ["/", `/runs/${doneRun}`, "/knowledge"]) {
    await page.goto(base + url);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, `${url} at 390 px is ${scroll} px wide: it scrolls sideways`);
    for (const id of await page.locator(".runid, table.runs td:first-child a").all()) {
      assert.equal(await id.evaluate((e) => e.getClientRects().length), 1, `${url}: a run id wraps: ` + (await id.innerText()));
    }
  }
  await page.goto(base + "/");
  await shot("runs-390", page.locator("main"));
  step("390 px: no sideways scroll, run ids on one line");

  assert.deepEqual(problems, [], "no script errors in the pages");
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
step("ok");
