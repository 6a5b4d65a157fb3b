// The browser of the conformance runs: it opens the authorization URL
// yohost gives ($BROWSER) and follows its redirects, as a person's browser
// does once they approve, back to yohost's callback. The suite's
// authorization server approves at once.
const response = await fetch(process.argv[2], { redirect: "follow" });
await response.text();
