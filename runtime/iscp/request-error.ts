// A request the iSCP broker refused, with the broker's result code.
import { resultCodeName } from "../../proto/wire/message.js";

/** A request refused by the broker; `resultCode` is the iSCP result code. */
export class IscpRequestError extends Error {
  constructor(
    readonly resultCode: number,
    readonly resultString: string,
  ) {
    super(`${resultString} [${resultCodeName(resultCode)}=${resultCode}]`);
  }
}
