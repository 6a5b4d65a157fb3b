//! The `#[plugin]` attribute of `yohost-sdk` (use it as
//! `#[yohost_sdk::plugin]`, re-exported there): on an `impl Plugin for X`
//! block it derives the plugin's hook set from the hook methods the block
//! defines, so the set the host calls is always the set the author wrote.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::{format_ident, quote};
use syn::{parse_macro_input, spanned::Spanned, Attribute, Error, ImplItem, ItemImpl};
use yohost_contract::Hook;

/// Derive the hook set of a plugin from the hook methods its
/// `impl Plugin for X` block defines (and refuse a hand-written `HOOKS`).
///
/// A hook method under `#[cfg(..)]` counts only where it is compiled in. An
/// item macro inside the block is refused: the attribute cannot see the
/// methods it would define.
#[proc_macro_attribute]
pub fn plugin(args: TokenStream, item: TokenStream) -> TokenStream {
    if !args.is_empty() {
        let args = proc_macro2::TokenStream::from(args);
        return Error::new(args.span(), "`#[plugin]` takes no arguments")
            .to_compile_error()
            .into();
    }
    let mut block = parse_macro_input!(item as ItemImpl);
    match derive_hooks(&block) {
        Ok(hooks) => {
            block.items.push(syn::parse_quote! {
                #[doc(hidden)]
                const DERIVED_HOOKS: ::yohost_sdk::Hooks =
                    ::yohost_sdk::Hooks::__derived_by_the_plugin_attribute(&[#(#hooks),*]);
            });
            quote!(#block).into()
        }
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#error #block).into()
        }
    }
}

/// The `Hook` expressions for the hook methods of `block`, each under the
/// `cfg` attributes of its method.
fn derive_hooks(block: &ItemImpl) -> Result<Vec<proc_macro2::TokenStream>, Error> {
    let is_plugin = block
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .is_some_and(|last| last.ident == "Plugin");
    if !is_plugin {
        return Err(Error::new(
            Span::call_site(),
            "`#[plugin]` goes on an `impl Plugin for YourType` block",
        ));
    }
    let mut hooks = Vec::new();
    for item in &block.items {
        match item {
            ImplItem::Fn(method) => {
                let name = method.sig.ident.to_string();
                if let Some(hook) = Hook::from_name(&name) {
                    let variant = format_ident!("{}", format!("{hook:?}"));
                    let cfgs = method.attrs.iter().filter(|a| is_cfg(a));
                    hooks.push(quote!(#(#cfgs)* ::yohost_sdk::Hook::#variant));
                }
            }
            ImplItem::Const(constant) if constant.ident == "HOOKS" => {
                return Err(Error::new(
                    constant.span(),
                    "remove `HOOKS`: `#[plugin]` derives the hooks from the methods this block defines",
                ));
            }
            ImplItem::Const(constant) if constant.ident == "DERIVED_HOOKS" => {
                return Err(Error::new(
                    constant.span(),
                    "`DERIVED_HOOKS` is written by `#[plugin]`, not by hand",
                ));
            }
            ImplItem::Macro(call) => {
                return Err(Error::new(
                    call.span(),
                    "`#[plugin]` cannot see the hook methods a macro defines: write them in the block",
                ));
            }
            _ => {}
        }
    }
    Ok(hooks)
}

fn is_cfg(attribute: &Attribute) -> bool {
    attribute.path().is_ident("cfg")
}
