import t from 'tap'
import { breakableStatement } from '../../src/http/template-helpers.js'

t.test('a statement breaks between its tokens: a <wbr> after a comma, a parenthesis, = and a qualified name\'s dot; escaped', async (t) => {
  const html = (text: unknown): string => breakableStatement(text).toHTML()
  t.equal(html('SELECT books.id,books.title FROM books WHERE id=1 AND price = 42.5'),
    'SELECT books.<wbr>id,<wbr>books.<wbr>title FROM books WHERE id&#x3D;<wbr>1 AND price &#x3D; 42.5', 'no break inside a number nor before a space')
  t.equal(html('SELECT COUNT(*) FROM "users"."names" WHERE t1.x IN (1,2)'), 'SELECT COUNT(<wbr>*) FROM &quot;users&quot;.<wbr>&quot;names&quot; WHERE t1.<wbr>x IN (<wbr>1,<wbr>2)')
  t.equal(html('<img src=x onerror=alert(1)>'), '&lt;img src&#x3D;<wbr>x onerror&#x3D;<wbr>alert(<wbr>1)&gt;', 'markup stays text')
  t.equal(html('a,'), 'a,', 'nothing after the last character')
  t.equal(html(undefined), '')
  t.equal(html(12), '12')
})
