// Quantities as manifests write them ("500m", "512Mi", "2", 1.5) -> numbers in base units.
const BINARY = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
const DECIMAL = { m: 1e-3, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };

export function quantity(value) {
  if (value === undefined || value === null || value === "") return 0;
  if (typeof value === "number") return value;
  const match = /^([0-9.]+(?:e[+-]?[0-9]+)?)([A-Za-z]*)$/.exec(String(value).trim());
  if (!match) return 0;
  const number = parseFloat(match[1]);
  const suffix = match[2];
  if (suffix in BINARY) return number * BINARY[suffix];
  if (suffix in DECIMAL) return number * DECIMAL[suffix];
  return number;
}

export const RESOURCES = ["cpu", "memory", "gpu"];

export function resources(map) {
  const out = {};
  for (const name of RESOURCES) out[name] = quantity((map || {})[name]);
  return out;
}

export function show(resource, amount) {
  if (resource === "memory") {
    for (const [unit, size] of [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20]]) {
      if (amount >= size) return `${(amount / size).toFixed(amount % size ? 1 : 0)}${unit}`;
    }
    return `${Math.round(amount)}`;
  }
  return Number.isInteger(amount) ? String(amount) : amount.toFixed(2);
}
