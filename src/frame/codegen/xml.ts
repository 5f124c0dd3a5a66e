/**
 * A tiny XML reader for the AMQP spec file: elements, double- or single-quoted attributes,
 * comments, processing instructions and text (ignored). No DTDs, CDATA or namespaces — the spec
 * uses none. Enough to stay dependency-free.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? m;
  });
}

export function parseXml(src: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [] };
  // root stays at the bottom: no end tag matches its name, so the stack is never empty.
  const stack: XmlElement[] = [root];
  let i = 0;
  const fail: (msg: string) => never = (msg) => {
    const line = src.slice(0, i).split('\n').length;
    throw new Error(`XML: ${msg} at line ${line}`);
  };
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    if (lt < 0) break;
    i = lt;
    if (src.startsWith('<!--', i)) {
      const e = src.indexOf('-->', i + 4);
      if (e < 0) fail('unterminated comment');
      i = e + 3;
    } else if (src.startsWith('<?', i)) {
      const e = src.indexOf('?>', i + 2);
      if (e < 0) fail('unterminated processing instruction');
      i = e + 2;
    } else if (src.startsWith('<!', i)) {
      const e = src.indexOf('>', i + 2);
      if (e < 0) fail('unterminated declaration');
      i = e + 1;
    } else if (src.startsWith('</', i)) {
      const e = src.indexOf('>', i);
      if (e < 0) fail('unterminated end tag');
      const name = src.slice(i + 2, e).trim();
      const top = stack.pop();
      if (!top || top.name !== name) fail(`mismatched </${name}>`);
      i = e + 1;
    } else {
      const m = /^<([A-Za-z_][\w.:-]*)/.exec(src.slice(i, i + 200));
      if (!m) fail('bad tag');
      const el: XmlElement = { name: m[1]!, attrs: {}, children: [] };
      i += m[0].length;
      for (;;) {
        while (/\s/.test(src[i] ?? '')) i++;
        if (src.startsWith('/>', i)) {
          i += 2;
          stack[stack.length - 1]!.children.push(el);
          break;
        }
        if (src[i] === '>') {
          i++;
          stack[stack.length - 1]!.children.push(el);
          stack.push(el);
          break;
        }
        const a = /^([A-Za-z_][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')/.exec(src.slice(i, i + 4000));
        if (!a) fail(`bad attribute in <${el.name}>`);
        el.attrs[a[1]!] = unescape(a[3] ?? a[4] ?? '');
        i += a[0].length;
      }
    }
  }
  if (stack.length !== 1) fail(`unclosed <${stack[stack.length - 1]!.name}>`);
  return root;
}
