// The pieces every management page's form and list share: a labelled text field bound to a state setter, and a
// list table's head with its unlabelled actions column.
import type { JSX } from "preact";

/** What the pages set on their text inputs (besides the value). */
interface InputProps {
  type?: "text" | "url" | "password" | "search";
  required?: boolean;
  maxLength?: number;
  size?: number;
  autocomplete?: string;
  autoFocus?: boolean;
  /** The id of a datalist of suggestions. */
  list?: string;
  /** The id of the form the input belongs to, when it stands outside it (a table row's). */
  form?: string;
  "aria-label"?: string;
}

/** Preact types an input's attributes as a union per `type`; these props are valid for each of the types above. */
const inputAttributes = (props: InputProps) => props as JSX.IntrinsicElements["input"];

/** `<label>Label <input/></label>`: the input's value is `value`; each keystroke goes to `onValue`. */
export function TextField({
  label,
  value,
  onValue,
  ...input
}: InputProps & { label: string; value: string; onValue(value: string): void }) {
  return (
    <label>
      {label}{" "}
      <input {...inputAttributes(input)} value={value} onInput={(e) => onValue((e.target as HTMLInputElement).value)} />
    </label>
  );
}

/** An input without its own label (a table cell's, named by aria-label), bound as TextField's is. */
export function CellInput({ value, onValue, ...input }: InputProps & { value: string; onValue(value: string): void }) {
  return (
    <input {...inputAttributes(input)} value={value} onInput={(e) => onValue((e.target as HTMLInputElement).value)} />
  );
}

/** The head of a list table: the columns' titles, then the actions column (named for screen readers only). */
export function ListHead({ columns, actions = true }: { columns: readonly string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
