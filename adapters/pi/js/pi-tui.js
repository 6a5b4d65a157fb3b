// `@earendil-works/pi-tui` (and `@mariozechner/pi-tui`) for pi extensions
// on a host with no terminal UI: components construct and render nothing,
// key matching never matches, and the text helpers work on plain strings.
// An extension that draws a TUI loads, and its tools and hooks work. What
// needs a terminal (the TUI itself, images, the clipboard) fails by name
// when called.

import { noTerminal, unavailable } from "pi:shape/refusals";

/** A component that renders nothing: every TUI component of pi-tui. */
export class Component {
  constructor(..._args) {
    this.children = [];
  }
  render(_width) {
    return [];
  }
  invalidate() {}
  handleInput(_data) {}
  addChild(child) {
    this.children.push(child);
  }
  removeChild(child) {
    this.children = this.children.filter((c) => c !== child);
  }
  clear() {
    this.children = [];
  }
  setText(_text) {}
  getText() {
    return "";
  }
  setFocused(_focused) {}
  dispose() {}
}

export class Box extends Component {}
export class CancellableLoader extends Component {}
export class Container extends Component {}
export class Editor extends Component {}
export class HStack extends Component {}
export class Image extends Component {}
export class Input extends Component {}
export class Loader extends Component {}
export class Markdown extends Component {}
export class MouseRegion extends Component {}
export class ScrollView extends Component {}
export class SelectList extends Component {}
export class SettingsList extends Component {}
export class Spacer extends Component {}
export class Text extends Component {}
export class TruncatedText extends Component {}
export class VStack extends Component {}

/** Where a component puts the terminal cursor (a marker pi strips). */
export const CURSOR_MARKER = "\x1b_pi:c\x07";

// ANSI escape sequences (CSI, OSC, APC), which take no columns.
const ESCAPES = /\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|_[^\x07\x1b]*(?:\x07|\x1b\\))/g;

/** `text` without terminal escape sequences. */
export function stripTerminalSequences(text) {
  return String(text).replace(ESCAPES, "");
}

/** How many columns `text` takes (escape sequences take none). */
export function visibleWidth(text) {
  return [...stripTerminalSequences(text)].length;
}

/** `text` cut to `width` columns, ending in `ellipsis` when cut. */
export function truncateToWidth(text, width, ellipsis = "...") {
  const plain = [...stripTerminalSequences(text)];
  if (plain.length <= width) return stripTerminalSequences(text);
  const room = Math.max(0, width - [...ellipsis].length);
  return plain.slice(0, room).join("") + ellipsis;
}

/** `text` wrapped at `width` columns, one string per line. */
export function wrapTextWithAnsi(text, width) {
  const lines = [];
  for (const line of stripTerminalSequences(text).split("\n")) {
    const chars = [...line];
    if (chars.length === 0) lines.push("");
    for (let at = 0; at < chars.length; at += Math.max(1, width)) lines.push(chars.slice(at, at + Math.max(1, width)).join(""));
  }
  return lines;
}

/** Columns `from` to `from + count` of `text`. */
export function sliceByColumn(text, from, count) {
  return [...stripTerminalSequences(text)].slice(from, count === undefined ? undefined : from + count).join("");
}

export const replaceControlCharacters = (text) => String(text).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");

/** Items whose text contains every character of `query`, in order. */
export function fuzzyFilter(items, query, getText = String) {
  const wanted = String(query ?? "").toLowerCase();
  return items.filter((item) => fuzzyMatch(wanted, getText(item)).matches);
}

export function fuzzyMatch(query, text) {
  const haystack = String(text).toLowerCase();
  let at = 0;
  for (const ch of String(query).toLowerCase()) {
    at = haystack.indexOf(ch, at);
    if (at < 0) return { matches: false, score: 0 };
    at += 1;
  }
  return { matches: true, score: 0 };
}

// Key names: `Key.enter` is "enter", `Key.ctrl("c")` is "ctrl+c".
const modifier = (name) => (key) => `${name}+${key}`;
export const Key = new Proxy(
  { ctrl: modifier("ctrl"), shift: modifier("shift"), alt: modifier("alt"), ctrlShift: modifier("ctrl+shift"), ctrlAlt: modifier("ctrl+alt"), shiftAlt: modifier("shift+alt") },
  { get: (modifiers, name) => (typeof name === "string" ? (modifiers[name] ?? name) : undefined) },
);

// There is no keyboard: nothing matches, nothing parses.
export const matchesKey = () => false;
export const parseKey = () => undefined;
export const isKeyRelease = () => false;
export const isKeyRepeat = () => false;
export const isKittyProtocolActive = () => false;
export const setKittyProtocolActive = () => {};
export const decodeKittyPrintable = () => undefined;
export const renderFakeCursor = () => "";
export const isFocusable = () => false;
export const getCapabilities = () => ({ images: null, trueColor: false, hyperlinks: false });
export const hyperlink = (text) => text;
export const styleText = (text) => text;
export const styleTextWithAnsi = (text) => text;

// Capabilities: a terminal with none.
export const detectCapabilities = () => getCapabilities();
export const setCapabilities = () => {};
export const setCapabilityOverrides = () => {};
export const resetCapabilitiesCache = () => {};

// Kitty images: there is no terminal to delete them from.
export const deleteKittyImage = () => "";
export const deleteAllKittyImages = () => "";

/** pi-tui's key bindings, none of which a headless host ever matches. */
export class KeybindingsManager {
  constructor(definitions = {}, userBindings = {}) {
    this.definitions = definitions;
    this.userBindings = userBindings;
  }
  matches(_data, _keybinding) {
    return false;
  }
  getKeys(keybinding) {
    const keys = this.userBindings[keybinding] ?? this.definitions[keybinding]?.defaultKeys ?? [];
    return Array.isArray(keys) ? keys : [keys];
  }
  getDefinition(keybinding) {
    return this.definitions[keybinding];
  }
  getConflicts() {
    return [];
  }
  setUserBindings(userBindings) {
    this.userBindings = userBindings ?? {};
  }
  getUserBindings() {
    return this.userBindings;
  }
  getResolvedBindings() {
    return Object.fromEntries(Object.keys(this.definitions).map((id) => [id, this.getKeys(id)]));
  }
}

/** pi-tui's own bindings, by id (none are defined headless). */
export const TUI_KEYBINDINGS = Object.freeze({});
let keybindings = new KeybindingsManager(TUI_KEYBINDINGS);
export const getKeybindings = () => keybindings;
export function setKeybindings(manager) {
  keybindings = manager;
}
/** No key is a page key: the selection never moves. */
export const getSelectPageIndex = () => undefined;

// The rest of pi's surface, which fails by name when called.
export const CombinedAutocompleteProvider = unavailable("CombinedAutocompleteProvider", noTerminal);
export const Marked = unavailable("Marked", noTerminal);
export const ProcessTerminal = unavailable("ProcessTerminal", noTerminal);
export const StdinBuffer = unavailable("StdinBuffer", noTerminal);
export const TUI = unavailable("TUI", noTerminal);
export const Token = unavailable("Token", noTerminal);
export const Tokens = unavailable("Tokens", noTerminal);
export const TuiAltScreen = unavailable("TuiAltScreen", noTerminal);
export const TuiMainScreen = unavailable("TuiMainScreen", noTerminal);
export const allocateImageId = unavailable("allocateImageId", noTerminal);
export const backgroundAnsi = unavailable("backgroundAnsi", noTerminal);
export const calculateImageRows = unavailable("calculateImageRows", noTerminal);
export const colorToHex = unavailable("colorToHex", noTerminal);
export const colorToOkhsl = unavailable("colorToOkhsl", noTerminal);
export const colorToOklch = unavailable("colorToOklch", noTerminal);
export const colorToRgb = unavailable("colorToRgb", noTerminal);
export const compositeTuiLine = unavailable("compositeTuiLine", noTerminal);
export const encodeITerm2 = unavailable("encodeITerm2", noTerminal);
export const encodeKitty = unavailable("encodeKitty", noTerminal);
export const foregroundAnsi = unavailable("foregroundAnsi", noTerminal);
export const formatProgramStatus = unavailable("formatProgramStatus", noTerminal);
export const getCellDimensions = unavailable("getCellDimensions", noTerminal);
export const getGifDimensions = unavailable("getGifDimensions", noTerminal);
export const getImageDimensions = unavailable("getImageDimensions", noTerminal);
export const getJpegDimensions = unavailable("getJpegDimensions", noTerminal);
export const getNativeClipboard = unavailable("getNativeClipboard", noTerminal);
export const getOsc8LinkAtColumn = unavailable("getOsc8LinkAtColumn", noTerminal);
export const getPngDimensions = unavailable("getPngDimensions", noTerminal);
export const getTerminalColorMode = unavailable("getTerminalColorMode", noTerminal);
export const getWebpDimensions = unavailable("getWebpDimensions", noTerminal);
export const imageFallback = unavailable("imageFallback", noTerminal);
export const indexedColor = unavailable("indexedColor", noTerminal);
export const isAppleTerminalSession = unavailable("isAppleTerminalSession", noTerminal);
export const isViewportTUI = unavailable("isViewportTUI", noTerminal);
export const mixColors = unavailable("mixColors", noTerminal);
export const okhslColor = unavailable("okhslColor", noTerminal);
export const oklabToOkhslLightness = unavailable("oklabToOkhslLightness", noTerminal);
export const oklchColor = unavailable("oklchColor", noTerminal);
export const parseColor = unavailable("parseColor", noTerminal);
export const parseTerminalColorSchemeReport = unavailable("parseTerminalColorSchemeReport", noTerminal);
export const renderImage = unavailable("renderImage", noTerminal);
export const renderLatex = unavailable("renderLatex", noTerminal);
export const rgbColor = unavailable("rgbColor", noTerminal);
export const setCellDimensions = unavailable("setCellDimensions", noTerminal);
export const setImageTranscoder = unavailable("setImageTranscoder", noTerminal);
