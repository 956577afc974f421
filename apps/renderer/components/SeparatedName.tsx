// A long machine-made name (an engine file "hello_deepa.sim.10.16.0-b1-516a2d.engine", a
// dimension "p2o.DynamicDimension.0") shown so that it breaks only after a separator (. _ - / :),
// never inside a token; a single token wider than the room loses its own middle-to-end with "…"
// while the tokens after it (the version, the extension, the index) stay in view. The text is
// the whole name (for copying and search) and the title shows it whole.
import { Fragment } from 'react';

/** The name cut after each run of separators: "a.b-c" → ["a.", "b-", "c"]. Exported for tests. */
export function nameTokens(name: string): string[] {
  return name.match(/[^._\-/:]+[._\-/:]*|[._\-/:]+/g) ?? [name];
}

export function SeparatedName({ name, className }: { name: string; className?: string }) {
  const tokens = nameTokens(name);
  return (
    <span className={`sep-name${className ? ` ${className}` : ''}`} title={name}>
      {tokens.map((t, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          <span className="sep-token">{t}</span>
        </Fragment>
      ))}
    </span>
  );
}
