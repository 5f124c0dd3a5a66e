/**
 * Erlang's `re` module as RabbitMQ uses it for policy patterns (and permission regexes):
 * `re:compile(Pattern)` and `re:run(Subject, Pattern, [{capture, none}])` on binaries, without
 * the `unicode` option — so PCRE 8 works on **bytes**: `.` is one byte, `é` in a pattern is two.
 *
 * Warren compiles a PCRE pattern to a JavaScript RegExp that runs over the subject's UTF-8 bytes
 * seen as Latin-1 characters (one character per byte), which gives PCRE's byte semantics:
 * - syntax errors are PCRE's, with its message and byte offset (`{"missing )",1}`), for the
 *   errors a policy pattern realistically has (see compilePcre);
 * - `$` matches at the end or before a final newline, `.` is any byte but `\n`, `\s` is
 *   `[\t\n\v\f\r ]`, `\w`/`\d`/`\b` are ASCII, character classes are sets of bytes;
 * - leading `(?i)`, `(?s)`, `(?m)`, `(?x)` (and combinations) set the options for the whole
 *   pattern.
 * Known differences: PCRE constructs a JavaScript RegExp has no equivalent of (recursion
 * `(?R)`/`(?1)`, conditionals, atomic groups and possessive quantifiers, backtracking verbs,
 * inline options after the start, branch reset) are accepted when PCRE accepts them but
 * approximated (see the README of this folder).
 */

export interface PcreError {
  message: string;
  /** Byte offset PCRE reports. */
  offset: number;
}

export type PcreCompiled = { ok: true; regex: CompiledPattern } | { ok: false; error: PcreError };

/** A compiled pattern: `matches(name)` is `re:run(Name, Pattern, [{capture, none}]) =:= match`. */
export class CompiledPattern {
  constructor(
    readonly source: string,
    private readonly regex: RegExp | undefined,
  ) {}

  matches(subject: string): boolean {
    if (!this.regex) return false;
    // One character per byte of the subject's UTF-8 encoding.
    const bytes = /^[\x00-\x7f]*$/.test(subject) ? subject : Buffer.from(subject, 'utf8').toString('latin1');
    return this.regex.test(bytes);
  }
}

class PcreSyntaxError extends Error {
  constructor(
    readonly pcreMessage: string,
    readonly offset: number,
  ) {
    super(pcreMessage);
  }
}

const POSIX_CLASSES: Record<string, (b: number) => boolean> = {
  alpha: (b) => isAlpha(b),
  lower: (b) => b >= 0x61 && b <= 0x7a,
  upper: (b) => b >= 0x41 && b <= 0x5a,
  alnum: (b) => isAlpha(b) || isDigit(b),
  ascii: (b) => b < 0x80,
  blank: (b) => b === 0x20 || b === 0x09,
  cntrl: (b) => b < 0x20 || b === 0x7f,
  digit: (b) => isDigit(b),
  graph: (b) => b > 0x20 && b < 0x7f,
  print: (b) => b >= 0x20 && b < 0x7f,
  punct: (b) => b > 0x20 && b < 0x7f && !isAlpha(b) && !isDigit(b),
  space: (b) => isSpace(b),
  word: (b) => isWord(b),
  xdigit: (b) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66),
};

function isAlpha(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
}
function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}
function isWord(b: number): boolean {
  return isAlpha(b) || isDigit(b) || b === 0x5f;
}
/** PCRE 8.34+ \s: space, \t \n \v \f \r. */
function isSpace(b: number): boolean {
  return b === 0x20 || (b >= 0x09 && b <= 0x0d);
}
function isHSpace(b: number): boolean {
  return b === 0x09 || b === 0x20 || b === 0xa0;
}
function isVSpace(b: number): boolean {
  return (b >= 0x0a && b <= 0x0d) || b === 0x85;
}

/** A set of bytes (a character class, or what a class escape matches). */
class ByteSet {
  readonly bits = new Uint8Array(256);
  add(b: number): void {
    this.bits[b] = 1;
  }
  addRange(from: number, to: number): void {
    for (let b = from; b <= to; b++) this.bits[b] = 1;
  }
  addWhere(pred: (b: number) => boolean, negate = false): void {
    for (let b = 0; b < 256; b++) if (pred(b) !== negate) this.bits[b] = 1;
  }
  /** As a JavaScript class over Latin-1 characters. */
  toSource(negate: boolean, caseless: boolean): string {
    const bits = Uint8Array.from(this.bits);
    if (caseless) {
      for (let b = 0x41; b <= 0x5a; b++) if (bits[b] || bits[b + 0x20]) bits[b] = bits[b + 0x20] = 1;
    }
    let out = '';
    for (let b = 0; b < 256; b++) {
      if (!bits[b]) continue;
      let e = b;
      while (e + 1 < 256 && bits[e + 1]) e++;
      out += e === b ? hex(b) : e === b + 1 ? hex(b) + hex(e) : `${hex(b)}-${hex(e)}`;
      b = e;
    }
    if (out === '') return negate ? '[\\s\\S]' : '[]';
    return `[${negate ? '^' : ''}${out}]`;
  }
}

/**
 * The byte an octal escape stands for; above \377 PCRE refuses it (8-bit, non-UTF-8 mode, as
 * RabbitMQ compiles), at the escape's last digit.
 */
function octalByte(digits: string, lastAt: number): number {
  const n = parseInt(digits, 8);
  if (n > 0o377) throw new PcreSyntaxError('octal value is greater than \\377 in 8-bit non-UTF-8 mode', lastAt);
  return n;
}

function hex(b: number): string {
  return `\\x${b.toString(16).padStart(2, '0')}`;
}

interface Flags {
  i: boolean;
  s: boolean;
  m: boolean;
  x: boolean;
}

/** Leading (*VERB) options PCRE 8 takes at the start of a pattern. */
const START_VERBS = /^\((\*(?:UTF8|UTF|UCP|CR|LF|CRLF|ANYCRLF|ANY|NO_START_OPT|NO_AUTO_POSSESS|BSR_ANYCRLF|BSR_UNICODE|LIMIT_MATCH=\d+|LIMIT_RECURSION=\d+))\)/;
/** Verbs allowed anywhere. */
const VERBS = /^\(\*(?:ACCEPT|FAIL|F|COMMIT|PRUNE(?::[^)]*)?|SKIP(?::[^)]*)?|THEN(?::[^)]*)?|MARK:[^)]*|:[^)]*)\)/;

/**
 * Translates PCRE (bytes as Latin-1 characters) to JavaScript regex source. Throws
 * PcreSyntaxError with PCRE's message and offset.
 */
class Translator {
  private pos = 0;
  private groups = 0;
  private readonly names = new Map<string, number>();
  /** (?J) is in force: group names may repeat (PCRE_DUPNAMES). */
  private dupNames = false;
  /** Numbered back references, checked once every group is known (PCRE allows forward ones). */
  private maxBackref = 0;
  /** Named references and recursions, checked at the end with the offset where each stood. */
  private readonly namedRefs: Array<{ name: string; offset: number }> = [];
  private readonly numberRefs: Array<{ n: number; offset: number }> = [];
  private flags: Flags = { i: false, s: false, m: false, x: false };

  constructor(private readonly p: string) {}

  translate(): string {
    while (true) {
      const m = START_VERBS.exec(this.p.slice(this.pos));
      if (!m) break;
      this.pos += m[0].length;
    }
    // Options that open the pattern apply to all of it.
    const lead = /^\(\?([imsxJUX-]*)\)/.exec(this.p.slice(this.pos));
    if (lead && !lead[1]!.includes('-')) {
      for (const c of lead[1]!) if (c in this.flags) this.flags[c as keyof Flags] = true;
      if (lead[1]!.includes('J')) this.dupNames = true;
      this.pos += lead[0].length;
    }
    const out = this.alternation(0);
    if (this.pos < this.p.length) throw new PcreSyntaxError('unmatched parentheses', this.pos);
    if (this.maxBackref > this.groups) throw new PcreSyntaxError('reference to non-existent subpattern', this.p.length);
    for (const r of this.namedRefs) if (!this.names.has(r.name)) throw new PcreSyntaxError('reference to non-existent subpattern', r.offset);
    for (const r of this.numberRefs) if (r.n > this.groups) throw new PcreSyntaxError('reference to non-existent subpattern', r.offset);
    return out;
  }

  private peek(k = 0): string | undefined {
    return this.p[this.pos + k];
  }

  private alternation(depth: number): string {
    const branches = [this.sequence(depth)];
    while (this.peek() === '|') {
      this.pos++;
      branches.push(this.sequence(depth));
    }
    return branches.join('|');
  }

  private sequence(depth: number): string {
    let out = '';
    let last: string | undefined; // the last repeatable item, not yet appended
    let lastQuantified = false;
    const flush = () => {
      if (last !== undefined) out += last;
      last = undefined;
    };
    while (this.pos < this.p.length) {
      const c = this.p[this.pos]!;
      if (this.flags.x && (isSpace(c.charCodeAt(0)) || c === '#')) {
        if (c === '#') while (this.pos < this.p.length && this.p[this.pos] !== '\n') this.pos++;
        else this.pos++;
        continue;
      }
      if (c === '|') break;
      if (c === ')') {
        if (depth === 0) throw new PcreSyntaxError('unmatched parentheses', this.pos);
        break;
      }
      const q = this.quantifier();
      if (q !== undefined) {
        if (last === undefined || lastQuantified) throw new PcreSyntaxError('nothing to repeat', q.at);
        last = `(?:${last})${q.text}`;
        lastQuantified = true;
        continue;
      }
      flush();
      lastQuantified = false;
      const item = this.atom(depth);
      if (item.repeatable) last = item.source;
      else out += item.source;
    }
    flush();
    return out;
  }

  /** A quantifier at pos ({ not followed by a valid quantifier is a literal), consumed. */
  private quantifier(): { text: string; at: number } | undefined {
    const at = this.pos;
    const c = this.p[at];
    let text: string;
    if (c === '*' || c === '+' || c === '?') {
      text = c;
      this.pos++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(at));
      if (!m) return undefined;
      const close = at + m[0].length - 1;
      const min = Number(m[1]);
      const max = m[3] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
      if (min > 65535 || (max !== undefined && max > 65535)) throw new PcreSyntaxError('number too big in {} quantifier', close);
      if (max !== undefined && max < min) throw new PcreSyntaxError('numbers out of order in {} quantifier', close);
      text = `{${min}${m[2] === undefined ? '' : `,${max ?? ''}`}}`;
      this.pos += m[0].length;
    } else {
      return undefined;
    }
    // PCRE reports a misplaced quantifier at its last character.
    const end = this.pos - 1;
    // Lazy (?) is the same in JavaScript; possessive (+) is approximated as greedy.
    if (this.peek() === '?') {
      text += '?';
      this.pos++;
    } else if (this.peek() === '+') {
      this.pos++;
    }
    return { text, at: end };
  }

  private atom(depth: number): { source: string; repeatable: boolean } {
    const c = this.p[this.pos]!;
    switch (c) {
      case '(':
        return this.group(depth);
      case '[':
        return { source: this.charClass(), repeatable: true };
      case '\\':
        return this.escape();
      case '.':
        this.pos++;
        return { source: this.flags.s ? '[\\s\\S]' : '[^\\n]', repeatable: true };
      case '^':
        this.pos++;
        return { source: this.flags.m ? '(?:^|(?<=\\n)(?=[\\s\\S]))' : '^', repeatable: false };
      case '$':
        this.pos++;
        return { source: this.flags.m ? '(?=\\n|$)' : '(?=\\n?$)', repeatable: false };
      default:
        this.pos++;
        return { source: this.literal(c.charCodeAt(0)), repeatable: true };
    }
  }

  private literal(b: number): string {
    if (this.flags.i && isAlpha(b)) {
      const lower = b | 0x20;
      return `[${hex(lower - 0x20)}${hex(lower)}]`;
    }
    return /[A-Za-z0-9_]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b);
  }

  private group(depth: number): { source: string; repeatable: boolean } {
    const start = this.pos;
    const rest = this.p.slice(start);
    if (rest.startsWith('(*')) {
      const verb = VERBS.exec(rest);
      if (!verb) {
        const close = this.p.indexOf(')', start);
        throw new PcreSyntaxError('(*VERB) not recognized or malformed', close < 0 ? this.p.length : close);
      }
      this.pos += verb[0].length;
      return { source: /^\(\*(FAIL|F)\)$/.test(verb[0]) ? '(?!)' : '', repeatable: false };
    }
    this.pos++; // (
    let open: string;
    let capturing = false;
    let repeatable = true;
    if (this.peek() !== '?') {
      capturing = true;
      open = '(';
    } else {
      this.pos++; // ?
      const k = this.peek();
      if (k === '#') {
        const close = this.p.indexOf(')', this.pos);
        if (close < 0) throw new PcreSyntaxError('missing ) after comment', this.p.length);
        this.pos = close + 1;
        return { source: '', repeatable: false };
      }
      if (k === ':' || k === '|' || k === '>') {
        this.pos++;
        open = '(?:';
      } else if (k === '=' || k === '!') {
        this.pos++;
        open = `(?${k}`;
        repeatable = false;
      } else if (k === '<' && (this.peek(1) === '=' || this.peek(1) === '!')) {
        open = `(?<${this.peek(1)}`;
        this.pos += 2;
        repeatable = false;
      } else if (k === '<' || k === "'" || (k === 'P' && this.peek(1) === '<')) {
        if (k === 'P') this.pos++;
        const terminator = this.peek() === '<' ? '>' : "'";
        this.pos++;
        if (k === '<' && this.peek() === '>') throw new PcreSyntaxError('unrecognized character after (?<', this.pos);
        const name = this.groupName(terminator);
        if (this.names.has(name) && !this.dupNames) throw new PcreSyntaxError('two named subpatterns have the same name', this.pos - 1);
        capturing = true;
        this.names.set(name, this.groups + 1);
        open = '(';
      } else if (k === 'P' && (this.peek(1) === '=' || this.peek(1) === '>')) {
        const kind = this.peek(1);
        this.pos += 2;
        const name = this.groupName(')', true);
        this.namedRefs.push({ name, offset: this.pos - 1 });
        // A back reference to a named group: resolved to its number once every group is known.
        return { source: kind === '=' ? this.namedBackref(name) : '(?:)', repeatable: true };
      } else if (k === '&') {
        this.pos++;
        const name = this.groupName(')', true);
        this.namedRefs.push({ name, offset: this.pos - 1 });
        return { source: '(?:)', repeatable: true };
      } else if (k === 'R' || (k !== undefined && /[0-9+-]/.test(k) && /^[+-]?\d+\)/.test(this.p.slice(this.pos)))) {
        const m = /^(R|[+-]?\d+)\)/.exec(this.p.slice(this.pos));
        if (!m) throw new PcreSyntaxError('unrecognized character after (? or (?-', this.pos);
        this.pos += m[0].length;
        if (m[1] !== 'R' && !m[1]!.startsWith('-') && !m[1]!.startsWith('+')) this.numberRefs.push({ n: Number(m[1]), offset: this.pos - 1 });
        // Recursion has no JavaScript equivalent: it matches the empty string here.
        return { source: '(?:)', repeatable: true };
      } else if (k === 'C' && /^C\d*\)/.test(this.p.slice(this.pos))) {
        // A callout: RabbitMQ sets none, so it matches the empty string.
        this.pos += /^C\d*\)/.exec(this.p.slice(this.pos))![0].length;
        return { source: '', repeatable: false };
      } else if (k === '(') {
        // A conditional group: (?(cond)yes|no) — both branches are kept as alternatives.
        const close = this.p.indexOf(')', this.pos);
        if (close < 0) throw new PcreSyntaxError('malformed number or name after (?(', this.p.length);
        this.pos = close + 1;
        open = '(?:';
      } else {
        const m = /^([imsxJUX]*)(?:-([imsxJUX]*))?([:)])/.exec(this.p.slice(this.pos));
        if (!m) {
          let at = this.pos;
          while (at < this.p.length && /[imsxJUX-]/.test(this.p[at]!)) at++;
          throw new PcreSyntaxError('unrecognized character after (? or (?-', at);
        }
        this.pos += m[0].length;
        // (?J) lets names repeat (PCRE_DUPNAMES), from where it is set.
        if (m[1]!.includes('J')) this.dupNames = true;
        if (m[2]?.includes('J')) this.dupNames = false;
        // Options after the start of the pattern are approximated: they are ignored.
        if (m[3] === ')') return { source: '', repeatable: false };
        open = '(?:';
      }
    }
    if (capturing) this.groups++;
    const saved = { ...this.flags };
    const body = this.alternation(depth + 1);
    this.flags = saved;
    if (this.peek() !== ')') throw new PcreSyntaxError('missing )', this.p.length);
    this.pos++;
    return { source: `${open}${body})`, repeatable };
  }

  /** Named back references are resolved lazily (the group may come later). */
  private namedBackref(name: string): string {
    return `\u0000NAMED:${name}\u0000`;
  }

  resolveNamed(source: string): string {
    return source.replace(/\u0000NAMED:([^\u0000]*)\u0000/g, (_m, name: string) => `(?:\\${this.names.get(name) ?? 0})`);
  }

  private groupName(terminator: string, isReference = false): string {
    if (!isReference && /^[0-9]/.test(this.p.slice(this.pos))) throw new PcreSyntaxError('group name must start with a non-digit', this.pos);
    const m = /^[A-Za-z0-9_]*/.exec(this.p.slice(this.pos))!;
    const name = m[0];
    this.pos += name.length;
    if (this.peek() !== terminator) throw new PcreSyntaxError('syntax error in subpattern name (missing terminator)', this.pos);
    if (name === '') throw new PcreSyntaxError(isReference ? 'subpattern name expected' : 'group name expected', this.pos);
    this.pos++;
    return name;
  }

  private charClass(): string {
    const start = this.pos;
    this.pos++; // [
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.pos++;
    }
    const set = new ByteSet();
    let first = true;
    for (;;) {
      if (this.pos >= this.p.length) throw new PcreSyntaxError('missing terminating ] for character class', this.p.length);
      const c = this.p[this.pos]!;
      if (c === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      if (c === '[' && /^\[[.=]/.test(this.p.slice(this.pos))) throw new PcreSyntaxError('POSIX collating elements are not supported', this.pos);
      if (c === '[' && /^\[[:.=]/.test(this.p.slice(this.pos))) {
        const m = /^\[:(\^?)([A-Za-z]*):\]/.exec(this.p.slice(this.pos));
        if (m) {
          const pred = POSIX_CLASSES[m[2]!];
          if (!pred) throw new PcreSyntaxError('unknown POSIX class name', this.pos + 2 + m[1]!.length);
          set.addWhere(pred, m[1] === '^');
          this.pos += m[0].length;
          continue;
        }
      }
      const lo = this.classAtom();
      if (lo.kind === 'set') {
        // A class escape followed by '-' makes the '-' literal.
        set.addWhere((b) => lo.set.bits[b] === 1);
        continue;
      }
      if (this.peek() === '-' && this.peek(1) !== undefined && this.peek(1) !== ']') {
        this.pos++; // -
        const hiAt = this.pos;
        const hi = this.classAtom();
        if (hi.kind === 'set') throw new PcreSyntaxError('invalid range in character class', this.pos - 1);
        if (hi.byte < lo.byte) throw new PcreSyntaxError('range out of order in character class', hiAt);
        set.addRange(lo.byte, hi.byte);
        continue;
      }
      set.add(lo.byte);
    }
    void start;
    return set.toSource(negate, this.flags.i);
  }

  private classAtom(): { kind: 'byte'; byte: number } | { kind: 'set'; set: ByteSet } {
    const c = this.p[this.pos]!;
    if (c !== '\\') {
      this.pos++;
      return { kind: 'byte', byte: c.charCodeAt(0) };
    }
    const e = this.escapeValue(true);
    if (e.kind === 'byte' || e.kind === 'set') return e;
    // \b in a class is a backspace; other assertions are literal letters.
    return { kind: 'byte', byte: 0x08 };
  }

  private escape(): { source: string; repeatable: boolean } {
    const e = this.escapeValue(false);
    switch (e.kind) {
      case 'byte':
        return { source: this.literal(e.byte), repeatable: true };
      case 'set':
        return { source: e.set.toSource(false, this.flags.i), repeatable: true };
      case 'source':
        return { source: e.source, repeatable: e.repeatable };
    }
  }

  /** Reads one escape at pos (the backslash). */
  private escapeValue(inClass: boolean):
    | { kind: 'byte'; byte: number }
    | { kind: 'set'; set: ByteSet }
    | { kind: 'source'; source: string; repeatable: boolean } {
    const start = this.pos;
    this.pos++; // backslash
    if (this.pos >= this.p.length) throw new PcreSyntaxError('\\ at end of pattern', this.p.length);
    const c = this.p[this.pos]!;
    this.pos++;
    const set = (pred: (b: number) => boolean, negate = false) => {
      const s = new ByteSet();
      s.addWhere(pred, negate);
      return { kind: 'set' as const, set: s };
    };
    switch (c) {
      case 'd': return set(isDigit);
      case 'D': return set(isDigit, true);
      case 'w': return set(isWord);
      case 'W': return set(isWord, true);
      case 's': return set(isSpace);
      case 'S': return set(isSpace, true);
      case 'h': return set(isHSpace);
      case 'H': return set(isHSpace, true);
      case 'v': return set(isVSpace);
      case 'V': return set(isVSpace, true);
      case 'n': return { kind: 'byte', byte: 0x0a };
      case 't': return { kind: 'byte', byte: 0x09 };
      case 'r': return { kind: 'byte', byte: 0x0d };
      case 'f': return { kind: 'byte', byte: 0x0c };
      case 'e': return { kind: 'byte', byte: 0x1b };
      case 'a': return { kind: 'byte', byte: 0x07 };
      case 'L': case 'l': case 'U': case 'u':
        throw new PcreSyntaxError('PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', this.pos - 1);
      case 'c': {
        if (this.pos >= this.p.length) throw new PcreSyntaxError('\\c at end of pattern', this.p.length);
        const b = this.p.charCodeAt(this.pos);
        if (b > 127) throw new PcreSyntaxError('\\c must be followed by an ASCII character', this.pos);
        this.pos++;
        const upper = b >= 0x61 && b <= 0x7a ? b - 0x20 : b;
        return { kind: 'byte', byte: upper ^ 0x40 };
      }
      case 'x': {
        if (this.peek() === '{') {
          const m = /^\{([0-9A-Fa-f]*)/.exec(this.p.slice(this.pos))!;
          const after = this.pos + m[0].length;
          if (this.p[after] !== '}') throw new PcreSyntaxError('non-hex character in \\x{} (closing brace missing?)', after);
          const v = parseInt(m[1] || '0', 16);
          if (v > 255) throw new PcreSyntaxError('character value in \\x{} or \\o{} is too large', after);
          this.pos = after + 1;
          return { kind: 'byte', byte: v };
        }
        const m = /^[0-9A-Fa-f]{0,2}/.exec(this.p.slice(this.pos))!;
        this.pos += m[0].length;
        return { kind: 'byte', byte: m[0] === '' ? 0 : parseInt(m[0], 16) };
      }
      case 'o': {
        if (this.peek() !== '{') return { kind: 'byte', byte: 0x6f };
        const m = /^\{([0-7]*)/.exec(this.p.slice(this.pos))!;
        const after = this.pos + m[0].length;
        if (this.p[after] !== '}') throw new PcreSyntaxError('non-octal character in \\o{} (closing brace missing?)', after);
        const v = parseInt(m[1] || '0', 8);
        if (v > 255) throw new PcreSyntaxError('character value in \\x{} or \\o{} is too large', after);
        this.pos = after + 1;
        return { kind: 'byte', byte: v };
      }
      case '0': {
        const m = /^[0-7]{0,2}/.exec(this.p.slice(this.pos))!;
        this.pos += m[0].length;
        return { kind: 'byte', byte: parseInt(`0${m[0]}`, 8) };
      }
      case 'Q': {
        const end = this.p.indexOf('\\E', this.pos);
        const text = this.p.slice(this.pos, end < 0 ? this.p.length : end);
        this.pos = end < 0 ? this.p.length : end + 2;
        if (inClass) {
          // \Q..\E in a class: its bytes are members; treat the first, put the rest back.
          if (text === '') return this.classAtomAfterEmpty();
          this.pos -= text.length - 1 + (end < 0 ? 0 : 2);
          return { kind: 'byte', byte: text.charCodeAt(0) };
        }
        return { kind: 'source', source: [...text].map((ch) => this.literal(ch.charCodeAt(0))).join(''), repeatable: text.length === 1 };
      }
      case 'E':
        if (inClass) return this.classAtomAfterEmpty();
        return { kind: 'source', source: '', repeatable: false };
      case 'N':
        if (this.peek() === '{') throw new PcreSyntaxError('PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', this.pos - 1);
        return set((b) => b !== 0x0a);
      case 'C':
        return set(() => true);
      case 'R':
        if (inClass) return { kind: 'byte', byte: 0x52 };
        return { kind: 'source', source: '(?:\\r\\n|[\\n\\x0b\\f\\r\\x85])', repeatable: true };
      case 'X':
        if (inClass) return { kind: 'byte', byte: 0x58 };
        return { kind: 'source', source: '(?:\\r\\n|[\\s\\S])', repeatable: true };
      case 'p': case 'P':
        return this.property(c === 'P');
      case 'b': case 'B': case 'A': case 'z': case 'Z': case 'G': case 'K': {
        if (inClass) return { kind: 'byte', byte: c === 'b' ? 0x08 : c.charCodeAt(0) };
        const src = { b: '\\b', B: '\\B', A: '^', z: '$', Z: '(?=\\n?$)', G: '^', K: '' }[c];
        return { kind: 'source', source: src, repeatable: false };
      }
      case 'g': {
        if (inClass) return { kind: 'byte', byte: 0x67 };
        const m = /^(?:\{(-?\d+|[A-Za-z_]\w*)\}|<(-?\d+|\w+)>|'(-?\d+|\w+)'|(-?\d+))/.exec(this.p.slice(this.pos));
        if (!m) throw new PcreSyntaxError('a numbered reference must not be zero', this.pos - 1);
        this.pos += m[0].length;
        const ref = m[1] ?? m[2] ?? m[3] ?? m[4]!;
        return this.reference(ref, m[2] !== undefined || m[3] !== undefined);
      }
      case 'k': {
        if (inClass) return { kind: 'byte', byte: 0x6b };
        const m = /^(?:<(\w+)>|'(\w+)'|\{(\w+)\})/.exec(this.p.slice(this.pos));
        if (/^(?:<>|''|\{\})/.test(this.p.slice(this.pos))) throw new PcreSyntaxError('subpattern name expected', this.pos + 1);
        if (!m) throw new PcreSyntaxError('\\k is not followed by a braced, angle-bracketed, or quoted name', this.pos - 1);
        this.pos += m[0].length;
        const name = m[1] ?? m[2] ?? m[3]!;
        this.namedRefs.push({ name, offset: this.pos - 1 });
        return { kind: 'source', source: this.namedBackref(name), repeatable: true };
      }
      default:
        if (c >= '1' && c <= '9') {
          if (inClass) {
            // An octal escape in a class; \8 and \9 are the digits.
            const m = /^[0-7]{0,2}/.exec(this.p.slice(this.pos))!;
            if (c > '7') return { kind: 'byte', byte: c.charCodeAt(0) };
            this.pos += m[0].length;
            return { kind: 'byte', byte: octalByte(c + m[0], this.pos - 1) };
          }
          const m = /^\d*/.exec(this.p.slice(this.pos))!;
          const n = Number(c + m[0]);
          if ((c === '8' || c === '9') && m[0] === '') return { kind: 'byte', byte: c.charCodeAt(0) };
          if (n >= 10 && n > this.groups) {
            // A multi-digit escape that is not a reference is an octal escape (PCRE rule).
            const o = /^[0-7]{0,3}/.exec(this.p.slice(start + 1))!;
            if (o[0] !== '') {
              this.pos = start + 1 + o[0].length;
              return { kind: 'byte', byte: octalByte(o[0], this.pos - 1) };
            }
          }
          this.pos += m[0].length;
          this.maxBackref = Math.max(this.maxBackref, n);
          return { kind: 'source', source: `(?:\\${n})`, repeatable: true };
        }
        // Any other escaped character stands for itself (PCRE without PCRE_EXTRA).
        return { kind: 'byte', byte: c.charCodeAt(0) };
    }
  }

  private classAtomAfterEmpty(): { kind: 'byte'; byte: number } | { kind: 'set'; set: ByteSet } {
    if (this.pos >= this.p.length) throw new PcreSyntaxError('missing terminating ] for character class', this.p.length);
    if (this.p[this.pos] === ']') return { kind: 'set', set: new ByteSet() };
    return this.classAtom();
  }

  private reference(ref: string, named: boolean): { kind: 'source'; source: string; repeatable: boolean } {
    if (/^-?\d+$/.test(ref)) {
      const n = Number(ref);
      if (n === 0) throw new PcreSyntaxError('a numbered reference must not be zero', this.pos - 1);
      const abs = n < 0 ? this.groups + 1 + n : n;
      if (abs <= 0) throw new PcreSyntaxError('reference to non-existent subpattern', this.pos - 1);
      this.maxBackref = Math.max(this.maxBackref, abs);
      return { kind: 'source', source: `(?:\\${abs})`, repeatable: true };
    }
    void named;
    this.namedRefs.push({ name: ref, offset: this.pos - 1 });
    return { kind: 'source', source: this.namedBackref(ref), repeatable: true };
  }

  /** \p{..} / \P{..}: in byte mode a property holds for the bytes whose Latin-1 character has it. */
  private property(negate: boolean): { kind: 'set'; set: ByteSet } {
    let name: string;
    if (this.peek() === '{') {
      const close = this.p.indexOf('}', this.pos);
      if (close < 0) throw new PcreSyntaxError('malformed \\P or \\p sequence', this.p.length);
      name = this.p.slice(this.pos + 1, close);
      this.pos = close + 1;
    } else {
      if (this.pos >= this.p.length) throw new PcreSyntaxError('malformed \\P or \\p sequence', this.p.length);
      name = this.p[this.pos]!;
      this.pos++;
    }
    if (name.startsWith('^')) {
      negate = !negate;
      name = name.slice(1);
    }
    const test = propertyTest(name);
    if (!test) throw new PcreSyntaxError('unknown property name after \\P or \\p', this.pos - 1);
    const s = new ByteSet();
    s.addWhere((b) => test(String.fromCharCode(b)), negate);
    return { kind: 'set', set: s };
  }
}

const PCRE_CATEGORIES = new Set([
  'C', 'Cc', 'Cf', 'Cn', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No',
  'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs',
]);

function propertyTest(name: string): ((ch: string) => boolean) | undefined {
  if (name === 'Any') return () => true;
  if (name === 'L&') return (ch) => /\p{Lu}|\p{Ll}|\p{Lt}/u.test(ch);
  if (name === 'Xan') return (ch) => /[\p{L}\p{N}]/u.test(ch);
  if (name === 'Xsp' || name === 'Xps') return (ch) => /[\p{Z}\t\n\v\f\r]/u.test(ch);
  if (name === 'Xwd') return (ch) => /[\p{L}\p{N}_]/u.test(ch);
  if (PCRE_CATEGORIES.has(name)) {
    const re = new RegExp(`\\p{${name}}`, 'u');
    return (ch) => re.test(ch);
  }
  // Scripts (Latin, Greek, Common, ...): whatever JavaScript knows by that name.
  try {
    const re = new RegExp(`\\p{Script=${name}}`, 'u');
    return (ch) => re.test(ch);
  } catch {
    return undefined;
  }
}

/** re:compile(Pattern) for a pattern given as text (its UTF-8 bytes are the pattern). */
export function compilePcre(pattern: string): PcreCompiled {
  const bytes = Buffer.from(pattern, 'utf8').toString('latin1');
  const t = new Translator(bytes);
  let source: string;
  try {
    source = t.resolveNamed(t.translate());
  } catch (err) {
    if (err instanceof PcreSyntaxError) return { ok: false, error: { message: err.pcreMessage, offset: err.offset } };
    throw err;
  }
  let regex: RegExp | undefined;
  try {
    regex = new RegExp(source);
  } catch {
    // PCRE accepted it but the translation is not a JavaScript regex: it matches nothing.
    regex = undefined;
  }
  return { ok: true, regex: new CompiledPattern(pattern, regex) };
}
