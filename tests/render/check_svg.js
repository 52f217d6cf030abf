// make test-render: the waterfall pictures of the scripted races
// (tests/racescript), opened in a real browser -- Debian's chromium,
// driven headless by playwright-core, one launch for every picture. For
// each picture: it loads with no console error, page error or request (it
// is self-contained); it has the lanes its race's trace says it must have
// (manifest.json, counted from the trace by racescript/samples: lookups,
// attempts by outcome -- the winner, the losers --, the timers); no two
// text labels overlap and none leaves the picture (bounding boxes as the
// browser laid them out, fonts and all); and it is saved as a PNG.
//
//   node check_svg.js SAMPLES_DIR   (PNGs are written beside the SVGs)
'use strict';

const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const dir = process.argv[2];
if (!dir) {
  console.error('usage: check_svg.js SAMPLES_DIR');
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const executablePath = process.env.CHROMIUM || '/usr/lib/chromium/chromium';

let failures = 0;
function fail(name, msg) {
  failures++;
  console.log(`${name === 'canary' ? 'caught' : 'FAIL'} ${name}: ${msg}`);
}

// What the page itself reports: every lane's data attributes and every
// text label's box, in CSS pixels of the page.
function inspect() {
  const svg = document.querySelector('svg');
  const root = svg.getBoundingClientRect();
  const lanes = [...svg.querySelectorAll('g.lane')].map((g) => ({
    kind: g.dataset.kind, outcome: g.dataset.outcome || '', timer: g.dataset.timer || '',
  }));
  const labels = [...svg.querySelectorAll('text')].map((t) => {
    const r = t.getBoundingClientRect();
    return { text: t.textContent, x: r.left - root.left, y: r.top - root.top, w: r.width, h: r.height };
  });
  return { lanes, labels, width: root.width, height: root.height };
}

function overlap(a, b) {
  const eps = 0.5; // sub-pixel rounding of adjacent boxes is not an overlap
  return a.x + eps < b.x + b.w && b.x + eps < a.x + a.w && a.y + eps < b.y + b.h && b.y + eps < a.y + a.h;
}

function checkLanes(want, got) {
  const name = want.name;
  const count = (pred) => got.lanes.filter(pred).length;
  if (count((l) => l.kind === 'lookup') !== want.lookups) {
    fail(name, `${count((l) => l.kind === 'lookup')} lookup lanes, the trace has ${want.lookups} lookups`);
  }
  if (count((l) => l.kind === 'attempt') !== want.attempts) {
    fail(name, `${count((l) => l.kind === 'attempt')} attempt lanes, the trace has ${want.attempts} attempts`);
  }
  for (const [outcome, n] of Object.entries(want.outcomes)) {
    const c = count((l) => l.kind === 'attempt' && l.outcome === outcome);
    if (c !== n) fail(name, `${c} attempt lanes "${outcome}", the trace has ${n}`);
  }
  const timers = got.lanes.filter((l) => l.kind === 'timer').map((l) => l.timer);
  if (JSON.stringify(timers) !== JSON.stringify(want.timers)) {
    fail(name, `timer lanes ${JSON.stringify(timers)}, the trace has ${JSON.stringify(want.timers)}`);
  }
}

function checkLabels(name, got) {
  const labels = got.labels.filter((l) => l.text.trim() !== '');
  if (labels.length === 0) fail(name, 'no text at all');
  for (const l of labels) {
    if (l.w <= 0 || l.h <= 0) fail(name, `label "${l.text}" has no size`);
    if (l.x < 0 || l.y < 0 || l.x + l.w > got.width + 0.5 || l.y + l.h > got.height + 0.5) {
      fail(name, `label "${l.text}" leaves the picture (${l.x.toFixed(1)},${l.y.toFixed(1)} ${l.w.toFixed(1)}x${l.h.toFixed(1)} in ${got.width}x${got.height})`);
    }
  }
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      if (overlap(labels[i], labels[j])) fail(name, `labels overlap: "${labels[i].text}" and "${labels[j].text}"`);
    }
  }
  return labels.length;
}

(async () => {
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    let problems = [];
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => { if (!r.url().startsWith('file://')) problems.push(`request to ${r.url()}`); });
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    for (const want of manifest) {
      const name = want.name;
      const svgPath = path.resolve(dir, `${name}.svg`);
      problems = [];
      const resp = await page.goto('file://' + svgPath, { waitUntil: 'load' });
      if (!resp || !resp.ok()) fail(name, `did not load (${resp && resp.status()})`);
      const requests = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
      for (const r of requests) problems.push(`loaded ${r}`);
      const got = await page.evaluate(inspect);
      for (const p of problems) fail(name, p);
      checkLanes(want, got);
      const n = checkLabels(name, got);
      await page.locator('svg').screenshot({ path: path.join(dir, `${name}.png`) });
      console.log(`ok   ${name}: ${got.lanes.length} lanes, ${n} labels, none overlapping; ${name}.png`);
    }
    // The check itself is checked: a picture whose labels do overlap, and
    // one whose label leaves it, must be caught.
    const before = failures;
    const canary = path.resolve(dir, 'canary.svg');
    fs.writeFileSync(canary, '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" font-size="12">' +
      '<text x="10" y="20">overlapping one</text><text x="40" y="22">overlapping two</text>' +
      '<text x="150" y="38">cut off at the edge</text></svg>\n');
    await page.goto('file://' + canary, { waitUntil: 'load' });
    checkLabels('canary', await page.evaluate(inspect));
    if (failures - before !== 2) {
      console.log(`FAIL canary: the label check reported ${failures - before} problems in a broken picture, want 2`);
      failures = before + 1;
    } else {
      failures = before;
      console.log('ok   canary: overlapping and cut-off labels are caught');
    }
  } finally {
    await browser.close();
  }
  if (failures) {
    console.log(`test-render: ${failures} failures`);
    process.exit(1);
  }
  console.log(`test-render: ${manifest.length} pictures checked in ${executablePath}`);
})().catch((e) => {
  console.error('test-render:', e);
  process.exit(1);
});
