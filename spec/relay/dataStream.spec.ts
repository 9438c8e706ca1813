import { describe, expect, it } from '@jest/globals';
import {
  RelayDataReceiver,
  RelayDataSender,
  type RecordCipher,
} from '../../src/relay/dataStream.js';
import { decodeRelayFrame, encodeRelayFrame } from '../../src/relay/frames.js';
import { RelayProtocolError } from '../../src/relay/relayProtocolError.js';

/**
 * A stand-in for a Noise transport with an implicit nonce: each record is XORed with its
 * counter and tagged with it, so decrypting out of order or twice fails like AEAD would.
 */
function counterCipher(): RecordCipher {
  let sendNonce = 0;
  let receiveNonce = 0;
  return {
    encrypt(plain) {
      const nonce = sendNonce++;
      const out = new Uint8Array(plain.length + 1);
      out[0] = nonce % 256;
      plain.forEach((byte, i) => (out[i + 1] = byte ^ (nonce % 256)));
      return out;
    },
    decrypt(cipher) {
      const nonce = receiveNonce++;
      if (cipher[0] !== nonce % 256) throw new Error('Decrypt error');
      return cipher.subarray(1).map((byte) => byte ^ (nonce % 256));
    },
  };
}

const text = new TextDecoder();
const big = JSON.stringify({
  id: 2,
  method: 'fs/writeFile',
  params: { data: 'x'.repeat(150_000) },
});

describe('RelayDataSender / RelayDataReceiver', () => {
  it('sends records with seq equal to the nonce and trace only on the first frame', () => {
    const cipher = counterCipher();
    const sender = new RelayDataSender('stream-1', cipher);
    const first = sender.send('{"id":1,"method":"initialize"}');
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const second = sender.send(big, trace);
    expect(first.map((f) => f.seq)).toEqual([0]);
    expect(second.map((f) => f.seq)).toEqual([1, 2, 3]);
    expect(second.map((f) => f.payload[0])).toEqual([1, 2, 3]);
    expect(second[0]!.traceparent).toBe(trace.traceparent);
    expect(second.slice(1).every((f) => f.traceparent === undefined)).toBe(true);
    // Every frame fits the WebSocket limit.
    for (const frame of [...first, ...second]) encodeRelayFrame(frame);
  });

  it('round-trips messages through reordered, duplicated frames', () => {
    const sender = new RelayDataSender('s', counterCipher());
    const receiver = new RelayDataReceiver(counterCipher());
    const messages = ['{"id":1,"result":{}}', big, '{"method":"initialized"}'];
    const frames = messages
      .flatMap((m) => sender.send(m))
      .map((f) => {
        const decoded = decodeRelayFrame(encodeRelayFrame(f));
        if (decoded.kind !== 'data') throw new Error(`expected a data frame, got ${decoded.kind}`);
        return decoded;
      });
    expect(frames.length).toBe(5);
    const arrival = [
      frames[1]!,
      frames[0]!,
      frames[0]!,
      frames[3]!,
      frames[2]!,
      frames[4]!,
      frames[2]!,
    ];
    const received = arrival.flatMap((f) => receiver.receive(f)).map((m) => text.decode(m));
    expect(received).toEqual(messages);
  });

  it('reports a decryption failure as a RelayProtocolError', () => {
    const sender = new RelayDataSender('s', counterCipher());
    const receiver = new RelayDataReceiver(counterCipher());
    const [frame] = sender.send('{"id":1,"result":{}}');
    const tampered = { ...frame!, payload: frame!.payload.map((b, i) => (i === 0 ? b ^ 1 : b)) };
    expect(() => receiver.receive(tampered)).toThrow(RelayProtocolError);
    const fresh = new RelayDataReceiver(counterCipher());
    expect(() => fresh.receive(tampered)).toThrow(
      'exec-server protocol error: Noise relay decryption failed: Decrypt error',
    );
  });
});
