/** The message of anything thrown (one definition, in protocol/). */
export { errorMessage } from '../protocol/errorMessage.js';
