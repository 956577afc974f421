// @vitest-environment happy-dom
// Long machine-made names break only after a separator, never inside a token.
import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { describe, expect, it } from 'vitest';
import { nameTokens, SeparatedName } from '../components/SeparatedName.js';

describe('SeparatedName', () => {
  it('cuts after each run of separators, keeping every character', () => {
    const name = 'hello_deepa.sim.10.16.0-b1-516a2d.engine';
    expect(nameTokens(name)).toEqual(['hello_', 'deepa.', 'sim.', '10.', '16.', '0-', 'b1-', '516a2d.', 'engine']);
    expect(nameTokens(name).join('')).toBe(name);
    expect(nameTokens('p2o.DynamicDimension.0')).toEqual(['p2o.', 'DynamicDimension.', '0']);
    expect(nameTokens('..odd')).toEqual(['..', 'odd']);
  });

  it('renders the whole name as its text and title, with a break opportunity only between tokens', () => {
    const host = document.createElement('div');
    const root = createRoot(host);
    act(() => root.render(<SeparatedName name="p2o.DynamicDimension.0" />));
    const el = host.querySelector('.sep-name')!;
    expect(el.textContent).toBe('p2o.DynamicDimension.0');
    expect(el.getAttribute('title')).toBe('p2o.DynamicDimension.0');
    expect([...el.children].map((c) => c.tagName.toLowerCase())).toEqual(['span', 'wbr', 'span', 'wbr', 'span']);
    act(() => root.unmount());
  });
});
