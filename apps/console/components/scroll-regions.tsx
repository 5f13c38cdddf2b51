'use client';

import { useEffect } from 'react';

/**
 * A table wider than its card scrolls inside it; a keyboard user must be able to scroll it too.
 * Watches the page and makes each `.table-card` that overflows a focusable, named region
 * (tabindex 0, role region, labelled by its card title or table), and plain again when it fits.
 */
export function ScrollRegions() {
  useEffect(() => {
    const main = document.querySelector('main');
    if (!main) return;
    let frame = 0;
    const update = () => {
      frame = 0;
      for (const card of main.querySelectorAll<HTMLElement>('.table-card')) {
        const overflows = card.scrollWidth > card.clientWidth + 1;
        if (overflows && card.tabIndex !== 0) {
          card.tabIndex = 0;
          card.setAttribute('role', 'region');
          const title = card.querySelector('.card-title')?.textContent ?? card.querySelector('table')?.getAttribute('aria-label') ?? 'Table';
          card.setAttribute('aria-label', `${title} (scrolls sideways)`);
        } else if (!overflows && card.hasAttribute('tabindex')) {
          card.removeAttribute('tabindex');
          card.removeAttribute('role');
          card.removeAttribute('aria-label');
        }
      }
    };
    const schedule = () => {
      frame ||= requestAnimationFrame(update);
    };
    const mutations = new MutationObserver(schedule);
    mutations.observe(main, { childList: true, subtree: true });
    window.addEventListener('resize', schedule);
    schedule();
    return () => {
      mutations.disconnect();
      window.removeEventListener('resize', schedule);
      if (frame) cancelAnimationFrame(frame);
    };
  }, []);
  return null;
}
