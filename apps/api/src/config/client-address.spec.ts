import { clientAddressFrom, parseCidr } from './client-address';

describe('client address behind proxies', () => {
  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(clientAddressFrom('203.0.113.9', '1.2.3.4', [])).toBe('203.0.113.9');
    expect(clientAddressFrom('203.0.113.9', '1.2.3.4', ['10.0.0.0/8'])).toBe('203.0.113.9');
  });

  it('believes a trusted proxy, and walks past trusted hops from the right', () => {
    expect(clientAddressFrom('10.1.2.3', '198.51.100.7', ['10.0.0.0/8'])).toBe('198.51.100.7');
    // the client forged the left-most entry; the proxy appended the real address
    expect(clientAddressFrom('10.1.2.3', '6.6.6.6, 198.51.100.7', ['10.0.0.0/8'])).toBe('198.51.100.7');
    expect(clientAddressFrom('10.1.2.3', '198.51.100.7, 10.9.9.9', ['10.0.0.0/8'])).toBe('198.51.100.7');
    expect(clientAddressFrom('::ffff:127.0.0.1', '192.0.2.1', ['127.0.0.1'])).toBe('192.0.2.1');
  });

  it('stops at a malformed hop and never returns text that is not an address', () => {
    expect(clientAddressFrom('10.1.2.3', '198.51.100.7, <script>, 10.0.0.2', ['10.0.0.0/8'])).toBe('10.0.0.2');
    expect(clientAddressFrom('10.1.2.3', 'not-an-ip', ['10.0.0.0/8'])).toBe('10.1.2.3');
  });

  it('matches IPv6 ranges and plain addresses', () => {
    expect(clientAddressFrom('fd00::1', '2001:db8::5', ['fd00::/8'])).toBe('2001:db8::5');
    expect(clientAddressFrom('fe00::1', '2001:db8::5', ['fd00::/8'])).toBe('fe00::1');
    expect(clientAddressFrom('::1', '2001:db8::5', ['::1'])).toBe('2001:db8::5');
  });

  it('parses addresses and ranges, and refuses anything else', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, prefix: 8 });
    expect(parseCidr('2001:db8::/32')).toMatchObject({ family: 6, prefix: 32 });
    expect(parseCidr('127.0.0.1')).toMatchObject({ family: 4, prefix: 32 });
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0/8', '1.2.3.4/x', '']) expect(parseCidr(bad)).toBeNull();
  });
});
