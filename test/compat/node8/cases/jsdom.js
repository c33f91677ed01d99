const { JSDOM } = require('jsdom');

// jsdom's encoding layer (@exodus/bytes) refuses to load beside the npm Buffer polyfill.
exports.handler = async () => {
  const dom = new JSDOM('<!DOCTYPE html><title>Menu</title><ul id="menu"><li class="dish">soup</li><li class="dish">fish &amp; chips</li><li>water</li></ul><p>old</p>');
  const { document } = dom.window;
  const dishes = [...document.querySelectorAll('#menu li.dish')].map((li) => li.textContent);
  document.querySelector('p').textContent = 'new <text>';
  const result = { title: document.title, dishes, paragraph: document.querySelector('p').outerHTML, items: document.getElementsByTagName('li').length };
  dom.window.close();
  return result;
};
