// The browser tests' driver (tests/e2e/test_ui_browser.py): headless Chromium (the system's
// chromium-headless-shell, or CHROMIUM) under playwright-core, steered by one JSON command a line on
// stdin, one JSON reply a line on stdout. Everything the page does that a test asks about is
// recorded: dialogs (dismissed), page errors, console errors, CSP violations (from a
// securitypolicyviolation listener added before any page script), failed requests.
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium-headless-shell",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
// A fresh context (no cookies, storage or listeners of the previous test's) and page: at the start, and on
// the "fresh" command, so that one browser serves a test module's tests one after the other.
let context;
let page;
let seen;
async function fresh() {
  if (context) {
    await context.close();
  }
  context = await browser.newContext({ viewport: { width: 1000, height: 800 }, colorScheme: "light" });
  seen = { dialogs: [], pageErrors: [], consoleErrors: [] };
  const record = seen;
  await context.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      window.__cspViolations.push({ directive: event.violatedDirective, blocked: event.blockedURI, sample: event.sample });
    });
  });
  page = await context.newPage();
  page.on("dialog", (dialog) => {
    record.dialogs.push({ type: dialog.type(), message: dialog.message() });
    dialog.dismiss().catch(() => {});
  });
  page.on("pageerror", (error) => record.pageErrors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") {
      record.consoleErrors.push(message.text());
    }
  });
}
await fresh();

const commands = {
  fresh: async () => {
    await fresh();
    return {};
  },
  goto: async ({ url }) => {
    const response = await page.goto(url, { waitUntil: "load" });
    return { status: response ? response.status() : null, url: page.url() };
  },
  hash: async ({ hash }) => {
    await page.evaluate((value) => {
      location.hash = value;
    }, hash);
    return {};
  },
  wait: async ({ selector, timeout_ms, state }) => {
    await page.locator(selector).first().waitFor({ state: state || "visible", timeout: timeout_ms });
    return {};
  },
  count: async ({ selector }) => ({ count: await page.locator(selector).count() }),
  texts: async ({ selector }) => ({ texts: await page.locator(selector).allTextContents() }),
  attributes: async ({ selector, name }) => ({
    values: await page.locator(selector).evaluateAll((nodes, key) => nodes.map((node) => node.getAttribute(key)), name),
  }),
  fill: async ({ selector, value }) => {
    await page.locator(selector).first().fill(value);
    return {};
  },
  press: async ({ selector, key }) => {
    if (selector) {
      await page.locator(selector).first().press(key);
    } else {
      await page.keyboard.press(key);
    }
    return {};
  },
  click: async ({ selector }) => {
    await page.locator(selector).first().click();
    return {};
  },
  // Click the first match until none is left (a click must make its element stop matching), at most `limit` times.
  clickEach: async ({ selector, limit }) => {
    const all = page.locator(selector);
    let clicked = 0;
    while ((await all.count()) > 0) {
      if (clicked === (limit || 500)) {
        throw new Error(`still matching ${selector} after ${clicked} clicks`);
      }
      await all.first().click();
      clicked++;
    }
    return { clicked };
  },
  viewport: async ({ width, height }) => {
    await page.setViewportSize({ width, height });
    return {};
  },
  eval: async ({ expression }) => ({ value: await page.evaluate(expression) }),
  screenshot: async ({ path, full_page }) => {
    await page.screenshot({ path, fullPage: Boolean(full_page) });
    return { path };
  },
  // A request with the browser context's cookies or without any (a fresh context); the body's first 256 KiB.
  fetch: async ({ url, cookies }) => {
    if (cookies === false) {
      const bare = await browser.newContext();
      try {
        const response = await bare.request.get(url, { maxRedirects: 0 });
        return { status: response.status(), body: (await response.text()).slice(0, 262144) };
      } finally {
        await bare.close();
      }
    }
    const response = await context.request.get(url, { maxRedirects: 0 });
    return { status: response.status(), body: (await response.text()).slice(0, 262144) };
  },
  seen: async () => ({ ...seen, csp: await page.evaluate(() => window.__cspViolations || []) }),
  close: async () => {
    await browser.close();
    return {};
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let reply;
  try {
    const command = JSON.parse(line);
    const run = commands[command.op];
    if (!run) {
      throw new Error(`unknown op ${command.op}`);
    }
    reply = { ok: true, ...(await run(command)) };
    if (command.op === "close") {
      process.stdout.write(JSON.stringify(reply) + "\n");
      break;
    }
  } catch (error) {
    reply = { ok: false, error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
await browser.close().catch(() => {});
