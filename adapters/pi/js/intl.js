// `Intl` for pi extensions on the embedded engine, which has none: the
// formatters extensions reach for, as an `en-US` host in UTC (or `TZ`)
// would give them. Numbers and dates format through the engine's own
// `toLocaleString`; `Segmenter` splits into code points (what a host with
// no terminal needs of graphemes); a time zone is `TZ`, else UTC.

/** @param {() => string} zone the time zone to report. */
export function makeIntl(zone) {
  const locale = "en-US";
  class NumberFormat {
    constructor(_locales, options = {}) {
      this.options = options;
    }
    format(value) {
      const { maximumFractionDigits, minimumFractionDigits, style, currency } = this.options;
      const number = Number(value);
      let text = maximumFractionDigits !== undefined || minimumFractionDigits !== undefined
        ? number.toFixed(Math.max(minimumFractionDigits ?? 0, Math.min(maximumFractionDigits ?? 20, 20)))
        : String(number);
      const [whole, fraction] = text.split(".");
      text = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (fraction ? `.${fraction}` : "");
      if (style === "percent") return `${(number * 100).toFixed(maximumFractionDigits ?? 0)}%`;
      if (style === "currency") return `${currency === "USD" || !currency ? "$" : `${currency} `}${text}`;
      return text;
    }
    formatToParts(value) {
      return [{ type: "integer", value: this.format(value) }];
    }
    resolvedOptions() {
      return { locale, numberingSystem: "latn", ...this.options };
    }
  }
  class DateTimeFormat {
    constructor(_locales, options = {}) {
      this.options = options;
    }
    format(date = new Date()) {
      return new Date(date).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
    }
    formatToParts(date) {
      return [{ type: "literal", value: this.format(date) }];
    }
    resolvedOptions() {
      return { locale, calendar: "gregory", numberingSystem: "latn", timeZone: zone(), ...this.options };
    }
  }
  class Collator {
    compare(a, b) {
      return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
    }
    resolvedOptions() {
      return { locale };
    }
  }
  class PluralRules {
    select(count) {
      return Number(count) === 1 ? "one" : "other";
    }
  }
  class RelativeTimeFormat {
    format(value, unit) {
      const amount = Math.abs(Number(value));
      const name = `${String(unit).replace(/s$/, "")}${amount === 1 ? "" : "s"}`;
      return Number(value) < 0 ? `${amount} ${name} ago` : `in ${amount} ${name}`;
    }
  }
  class ListFormat {
    format(items) {
      const list = [...items].map(String);
      return list.length < 3 ? list.join(" and ") : `${list.slice(0, -1).join(", ")}, and ${list.at(-1)}`;
    }
  }
  class Segmenter {
    *segment(text) {
      let index = 0;
      for (const segment of String(text)) {
        yield { segment, index, input: String(text) };
        index += segment.length;
      }
    }
  }
  // Intl's constructors may be called without `new`, as `Intl.DateTimeFormat()`.
  const callable = (/** @type {any} */ Class) =>
    new Proxy(Class, { apply: (target, _this, args) => new target(...args) });
  return Object.freeze({
    NumberFormat: callable(NumberFormat),
    DateTimeFormat: callable(DateTimeFormat),
    Collator: callable(Collator),
    PluralRules: callable(PluralRules),
    RelativeTimeFormat: callable(RelativeTimeFormat),
    ListFormat: callable(ListFormat),
    Segmenter: callable(Segmenter),
    getCanonicalLocales: () => [locale],
    supportedValuesOf: () => [],
  });
}
