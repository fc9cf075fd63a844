// The one naming scheme of devices, wherever they are paired (the command line, the console's code, its sheet
// of codes): the device's word on the screens, "-", and its number in 2 digits or more (kiosk-01, handheld-07,
// kiosk-100). The server names a device paired without a name the same way (pairing.default_device_name), and
// keeps each name for its code from the moment the code is made. A pure module: no page, no catalogue.

export const DEVICE_PREFIX = { kiosk: "kiosk-", runner: "handheld-" };
const MAX_NAMES = 64; // the server's limit of codes open at once (pairing.MAX_OPEN_CODES)

// The name of device number `n` after `prefix` ("kiosk-", 7: "kiosk-07").
export function deviceName(prefix, n) {
  return `${prefix}${String(n).padStart(2, "0")}`;
}

// The names a hall's range gives: prefix + each number from..to (kiosk- 1..40: kiosk-01..kiosk-40); null for a
// range that is not one. One more than the limit at most, so that a caller can tell a range too long.
export function hallNames(prefix, from, to) {
  if (!/^\d+$/.test(from) || !/^\d+$/.test(to) || Number(to) < Number(from)) return null;
  const names = [];
  for (let n = Number(from); n <= Number(to) && names.length <= MAX_NAMES; n++) names.push(deviceName(prefix, n));
  return names;
}
