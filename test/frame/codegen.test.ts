import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { generate, SPEC_PATH } from '../../src/frame/codegen/generate.js';
import { parseXml } from '../../src/frame/codegen/xml.js';

describe('codegen (DESIGN.md convention 1: the spec is the source)', () => {
  it('regenerating from the spec XML yields exactly the committed files (run `npm run gen`)', () => {
    const files = generate(readFileSync(SPEC_PATH, 'utf8'));
    expect([...files.keys()]).to.deep.equal(['methods.ts', 'properties.ts']);
    for (const [name, content] of files) {
      const committed = readFileSync(`src/frame/generated/${name}`, 'utf8');
      expect(committed === content, `src/frame/generated/${name} is stale: run npm run gen`).to.equal(true);
      expect(content.startsWith('// GENERATED — DO NOT EDIT (npm run gen)\n')).to.equal(true);
    }
  });

  it('is deterministic', () => {
    const xml = readFileSync(SPEC_PATH, 'utf8');
    expect([...generate(xml)]).to.deep.equal([...generate(xml)]);
  });

  it('parses the XML subset the spec uses', () => {
    const doc = parseXml(`<?xml version="1.0"?>\n<!-- c -->\n<a x="1" y='&lt;2&gt;'><b/><c z="&amp;">text</c></a>`);
    expect(doc.children[0]).to.deep.equal({
      name: 'a',
      attrs: { x: '1', y: '<2>' },
      children: [
        { name: 'b', attrs: {}, children: [] },
        { name: 'c', attrs: { z: '&' }, children: [] },
      ],
    });
    expect(() => parseXml('<a><b></a>')).to.throw('mismatched');
    expect(() => parseXml('<a>')).to.throw('unclosed');
  });
});
